// SPDX-License-Identifier: GPL-2.0-only
/*
 * /sys/kernel/perfmon: how user space finds the interface, its limits, and
 * the description of the PMU.
 */

#include <linux/atomic.h>
#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/mm.h>
#include <linux/perfmon_pmu.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/user_namespace.h>
#include <uapi/linux/perfmon.h>
#include <asm/unistd.h>

#include "pmu.h"
#include "resource.h"

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", PFM_VERSION_MAJOR, PFM_VERSION_MINOR);
}

static struct kobj_attribute version_attr = __ATTR_RO(version);

/*
 * libpfm-3.x finds the calls through this number: the first of twelve
 * consecutive slots, pfm_create_context() being the first.
 */
static ssize_t syscall_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", __NR_pfm_create_context);
}

static struct kobj_attribute syscall_attr = __ATTR_RO(syscall);

static ssize_t task_sessions_count_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&pfm_task_sessions));
}

static struct kobj_attribute task_sessions_count_attr =
	__ATTR_RO(task_sessions_count);

static ssize_t task_group_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	kgid_t gid = READ_ONCE(pfm_task_group);

	if (!gid_valid(gid))
		return sysfs_emit(buf, "-1\n");
	return sysfs_emit(buf, "%u\n", from_kgid_munged(current_user_ns(), gid));
}

static ssize_t task_group_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	kgid_t gid;
	int val, ret;

	ret = kstrtoint(buf, 0, &val);
	if (ret)
		return ret;
	if (val == -1) {
		gid = INVALID_GID;
	} else {
		gid = make_kgid(current_user_ns(), val);
		if (val < 0 || !gid_valid(gid))
			return -EINVAL;
	}
	WRITE_ONCE(pfm_task_group, gid);
	return count;
}

static struct kobj_attribute task_group_attr = __ATTR_RW(task_group);

static ssize_t arg_mem_max_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pfm_arg_mem_max));
}

static ssize_t arg_mem_max_store(struct kobject *kobj,
				 struct kobj_attribute *attr, const char *buf,
				 size_t count)
{
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;
	/* memdup_user() copies the vector: no more than kmalloc() can give */
	if (val < PAGE_SIZE || val > KMALLOC_MAX_SIZE)
		return -EINVAL;
	WRITE_ONCE(pfm_arg_mem_max, val);
	return count;
}

static struct kobj_attribute arg_mem_max_attr = __ATTR_RW(arg_mem_max);

static ssize_t unprivileged_reserve_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(pfm_unprivileged_reserve));
}

static ssize_t unprivileged_reserve_store(struct kobject *kobj,
					  struct kobj_attribute *attr,
					  const char *buf, size_t count)
{
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 10, &val);
	if (ret)
		return ret;
	if (val > 1)
		return -EINVAL;
	WRITE_ONCE(pfm_unprivileged_reserve, val);
	return count;
}

static struct kobj_attribute unprivileged_reserve_attr =
	__ATTR_RW(unprivileged_reserve);

static ssize_t debug_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(pfm_debug));
}

static ssize_t debug_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	bool val;
	int ret;

	ret = kstrtobool(buf, &val);
	if (ret)
		return ret;
	WRITE_ONCE(pfm_debug, val);
	return count;
}

static struct kobj_attribute debug_attr = __ATTR_RW(debug);

static struct attribute *pfm_attrs[] = {
	&version_attr.attr,
	&syscall_attr.attr,
	&task_sessions_count_attr.attr,
	&task_group_attr.attr,
	&arg_mem_max_attr.attr,
	&unprivileged_reserve_attr.attr,
	&debug_attr.attr,
	NULL
};

static const struct attribute_group pfm_attr_group = {
	.attrs = pfm_attrs,
};

/* pmu_desc/pmcN and pmu_desc/pmdN: one directory per register. */
struct pfm_reg_kobj {
	struct kobject			kobj;
	const struct pfm_regdesc	*desc;
	bool				is_pmd;
};

static const struct pfm_regdesc *pfm_kobj_desc(struct kobject *kobj)
{
	return container_of(kobj, struct pfm_reg_kobj, kobj)->desc;
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", pfm_kobj_desc(kobj)->name);
}

static ssize_t dfl_val_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", pfm_kobj_desc(kobj)->dfl_val);
}

static ssize_t rsvd_msk_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", pfm_kobj_desc(kobj)->rsvd_msk);
}

/* The counter width for a PMD; 64 for a PMC, whose bits are all there. */
static ssize_t width_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct pfm_reg_kobj *r = container_of(kobj, struct pfm_reg_kobj, kobj);

	return sysfs_emit(buf, "%u\n", r->is_pmd ? r->desc->width : 64);
}

static ssize_t addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0x%lx\n", pfm_kobj_desc(kobj)->addr);
}

static struct kobj_attribute name_attr = __ATTR_RO(name);
static struct kobj_attribute dfl_val_attr = __ATTR_RO(dfl_val);
static struct kobj_attribute rsvd_msk_attr = __ATTR_RO(rsvd_msk);
static struct kobj_attribute width_attr = __ATTR_RO(width);
static struct kobj_attribute addr_attr = __ATTR_RO(addr);

static struct attribute *pfm_reg_attrs[] = {
	&name_attr.attr,
	&dfl_val_attr.attr,
	&rsvd_msk_attr.attr,
	&width_attr.attr,
	&addr_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(pfm_reg);

static void pfm_reg_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct pfm_reg_kobj, kobj));
}

static const struct kobj_type pfm_reg_ktype = {
	.release	= pfm_reg_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= pfm_reg_groups,
};

static ssize_t model_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", pfm_pmu->model);
}

static struct kobj_attribute model_attr = __ATTR_RO(model);

static int __init pfm_sysfs_add_regs(struct kobject *parent,
				     const struct pfm_regdesc *desc,
				     unsigned int num, bool is_pmd)
{
	struct pfm_reg_kobj *r;
	unsigned int i;
	int ret;

	for (i = 0; i < num; i++) {
		if (!(desc[i].type & PFM_REG_IMPL))
			continue;
		r = kzalloc_obj(*r);
		if (!r)
			return -ENOMEM;
		r->desc = &desc[i];
		r->is_pmd = is_pmd;
		ret = kobject_init_and_add(&r->kobj, &pfm_reg_ktype, parent,
					   "%s%u", is_pmd ? "pmd" : "pmc", i);
		if (ret) {
			kobject_put(&r->kobj);
			return ret;
		}
	}
	return 0;
}

static int __init pfm_sysfs_add_pmu(struct kobject *parent)
{
	struct kobject *kobj;
	int ret;

	kobj = kobject_create_and_add("pmu_desc", parent);
	if (!kobj)
		return -ENOMEM;
	ret = sysfs_create_file(kobj, &model_attr.attr);
	if (!ret)
		ret = pfm_sysfs_add_regs(kobj, pfm_pmu->pmc, pfm_pmu->num_pmcs,
					 false);
	if (!ret)
		ret = pfm_sysfs_add_regs(kobj, pfm_pmu->pmd, pfm_pmu->num_pmds,
					 true);
	return ret;
}

static int __init pfm_sysfs_init(void)
{
	struct kobject *kobj;
	int ret;

	kobj = kobject_create_and_add("perfmon", kernel_kobj);
	if (!kobj)
		return -ENOMEM;

	ret = sysfs_create_group(kobj, &pfm_attr_group);
	if (ret)
		kobject_put(kobj);
	else if (pfm_pmu)
		ret = pfm_sysfs_add_pmu(kobj);
	return ret;
}
late_initcall(pfm_sysfs_init);
