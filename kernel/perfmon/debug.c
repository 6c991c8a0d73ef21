// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon debug statistics: /sys/kernel/debug/perfmon/stats.
 */

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/seq_file.h>

#include "stats.h"

DEFINE_PER_CPU(struct pfm_stats, pfm_stats);

#define PFM_STAT(field)	{ #field, offsetof(struct pfm_stats, field) }

static const struct {
	const char	*name;
	size_t		offset;
} pfm_stat_fields[] = {
	PFM_STAT(ctxsw_in),
	PFM_STAT(ctxsw_out),
	PFM_STAT(loads),
	PFM_STAT(loads_kept),
	PFM_STAT(saves),
	PFM_STAT(ovfl_intr),
	PFM_STAT(ovfl_at_save),
	PFM_STAT(stale_intr),
	PFM_STAT(cpu_resets),
	PFM_STAT(cpu_takes),
	PFM_STAT(pmds_cleared),
};

static int pfm_stats_show(struct seq_file *m, void *v)
{
	unsigned int i, cpu;

	seq_puts(m, "cpu");
	for (i = 0; i < ARRAY_SIZE(pfm_stat_fields); i++)
		seq_printf(m, " %s", pfm_stat_fields[i].name);
	seq_putc(m, '\n');
	for_each_possible_cpu(cpu) {
		const void *s = per_cpu_ptr(&pfm_stats, cpu);

		seq_printf(m, "%u", cpu);
		for (i = 0; i < ARRAY_SIZE(pfm_stat_fields); i++)
			seq_printf(m, " %llu",
				   *(const u64 *)(s + pfm_stat_fields[i].offset));
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pfm_stats);

static int __init pfm_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("perfmon", NULL);

	debugfs_create_file("stats", 0444, dir, NULL, &pfm_stats_fops);
	return 0;
}
late_initcall(pfm_debugfs_init);
