// SPDX-License-Identifier: GPL-2.0-only
/*
 * perfmon: the state of each CPU's PMU.
 *
 * struct pfm_cpu (cpu.h) is what perfmon knows of a CPU's PMU: which
 * context is live there, and what its registers hold.
 *
 * A CPU that comes online, or the boot CPU resuming from suspend, has a
 * PMU that holds nothing perfmon left there, and one that goes down
 * keeps nothing of it.
 *
 * At reboot and kexec, every CPU stops counting.
 */

#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/cpuhotplug.h>
#include <linux/init.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/perfmon.h>
#include <linux/printk.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/syscore_ops.h>

#include "cpu.h"
#include "pmu.h"

DEFINE_PER_CPU(struct pfm_cpu, pfm_cpu);

/* Set at reboot: no context goes live again (pfm_reboot()). */
bool pfm_halted;

static void pfm_clear_cpu(void *unused)
{
	struct pfm_cpu *pc = this_cpu_ptr(&pfm_cpu);

	pfm_clear_hw_pmds(pc->dirty);
	pc->dirty = 0;
	pfm_clear_hw_pmcs(pc);
}

static bool pfm_cpu_dirty(int cpu, void *unused)
{
	struct pfm_cpu *pc = per_cpu_ptr(&pfm_cpu, cpu);

	return READ_ONCE(pc->dirty) || memchr_inv(pc->pmcs, 0, sizeof(pc->pmcs));
}

/*
 * A CPU that comes online, or the boot CPU resuming from suspend, has a PMU
 * that holds nothing perfmon left there, whatever its state says: it
 * resets it at its next use, as after a reservation (pfm_pmu_gen is never
 * 0 while perfmon holds the PMU).
 */
static void pfm_cpu_forget(void)
{
	unsigned long flags;

	local_irq_save(flags);
	this_cpu_write(pfm_cpu.gen, 0);
	local_irq_restore(flags);
}

/*
 * The description of the PMU holds for every CPU, one brought online after
 * boot included, unless its firmware contradicts what the boot CPUs
 * reported (hybrid processors): no context counts there.
 */
static void pfm_cpu_check(unsigned int cpu)
{
	bool unusable = !pfm_pmu->cpu_starting();

	this_cpu_write(pfm_cpu.unusable, unusable);
	if (unusable)
		pr_warn_once("CPU%u lacks counters of the PMU description: no context counts there\n",
			     cpu);
}

/*
 * The hotplug callbacks of the starting section run on @cpu with
 * interrupts disabled: as it comes up, before any thread can run there,
 * and as it goes down, after the last thread left it (a thread that
 * disabled migration can still run on a CPU that is no longer active).
 */
static int pfm_cpu_starting(unsigned int cpu)
{
	pfm_cpu_forget();
	pfm_cpu_check(cpu);
	return 0;
}

/*
 * No context is live on a dying CPU: what contexts left in its PMU is
 * cleared, since the CPU may be offline when perfmon gives the PMU back.
 */
static int pfm_cpu_dying(unsigned int cpu)
{
	pfm_clear_cpu(NULL);
	this_cpu_write(pfm_cpu.gen, 0);
	return 0;
}

/*
 * Suspend to RAM runs these on the boot CPU, interrupts disabled, in the
 * thread that suspends, every other thread frozen: no context but the one
 * of that thread can be live. The PMU is lost in between: that context
 * goes to memory, and comes back to a PMU reset.
 */
static int pfm_suspend(void *unused)
{
	pfm_switch_out(current, false);
	return 0;
}

static void pfm_resume(void *unused)
{
	pfm_cpu_forget();
	__pfm_ctxsw_in(current);
}

static const struct syscore_ops pfm_syscore_ops = {
	.suspend = pfm_suspend,
	.resume = pfm_resume,
};

static struct syscore pfm_syscore = {
	.ops = &pfm_syscore_ops,
};

static int __init pfm_cpu_init(void)
{
	int ret;

	if (!pfm_pmu)
		return 0;
	/* pfm_cpu_starting() runs on the CPUs already online too */
	ret = cpuhp_setup_state(CPUHP_AP_PERFMON_STARTING, "perfmon:starting",
				pfm_cpu_starting, pfm_cpu_dying);
	if (ret < 0)
		return ret;
	register_syscore(&pfm_syscore);
	return 0;
}
subsys_initcall(pfm_cpu_init);

/**
 * pfm_clear_counters - clear what contexts left in the PMU of every CPU
 *
 * For the PMU's other user, when perfmon gives it back: no context is
 * attached, so none is live. The counters and the PMCs that contexts left
 * values in are cleared; only the CPUs that have something to clear are
 * interrupted.
 */
void pfm_clear_counters(void)
{
	on_each_cpu_cond(pfm_cpu_dirty, pfm_clear_cpu, NULL, true);
}

/*
 * Save the context live on this CPU (its thread's, the one interrupted),
 * give back what the idle task kept, and clear what contexts left here.
 */
static void pfm_halt_cpu(void *unused)
{
	pfm_switch_out(current, false);
	pfm_clear_cpu(NULL);
}

/*
 * A reboot, or a kexec into another kernel, must not leave counters
 * counting: the kernel that boots next finds the PMU as perfmon left it
 * (perf_events calls enabled event selects a broken BIOS). Every CPU
 * stops counting and clears its PMU, and no context goes live after
 * that. The contexts stay as they are, their calls working from memory.
 */
static int pfm_reboot(struct notifier_block *nb, unsigned long action,
		      void *data)
{
	WRITE_ONCE(pfm_halted, true);
	on_each_cpu(pfm_halt_cpu, NULL, 1);
	return NOTIFY_OK;
}

/* Last, as perf_events: the users of the PMU stop before it. */
static struct notifier_block pfm_reboot_nb = {
	.notifier_call	= pfm_reboot,
	.priority	= INT_MIN,
};

static int __init pfm_reboot_init(void)
{
	if (pfm_pmu)
		register_reboot_notifier(&pfm_reboot_nb);
	return 0;
}
subsys_initcall(pfm_reboot_init);
