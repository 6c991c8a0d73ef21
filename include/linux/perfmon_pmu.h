/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perfmon PMU description: what an architecture tells the perfmon core
 * about its performance monitoring unit.
 *
 * A PMU is described by two tables, one for the configuration registers
 * (PMCs) and one for the data registers (PMDs), indexed by the register
 * numbers user space uses, and by the few operations the core cannot do
 * itself. The tables are data: the core validates every user value
 * against them, so that no value can raise a fault or enable what the
 * table forbids.
 */
#ifndef _LINUX_PERFMON_PMU_H
#define _LINUX_PERFMON_PMU_H

#include <linux/bitops.h>
#include <linux/types.h>

/* Highest number of PMCs and PMDs a PMU description may have. */
#define PFM_MAX_HW_PMCS		32
#define PFM_MAX_HW_PMDS		32

/*
 * struct pfm_regdesc.type. Every PMD that exists is a counter, virtualized
 * to 64 bits.
 */
#define PFM_REG_IMPL		0x01	/* the register exists */

/*
 * Register numbers are below 32, PFM_MAX_HW_PMCS and PFM_MAX_HW_PMDS: a
 * set of registers is a u64 bitmask, bit n for register n, and
 * pfm_for_each_reg() walks it from the lowest register up.
 */
#define pfm_for_each_reg(n, mask)					\
	for (u64 __pfm_m = (mask);					\
	     __pfm_m && ((n) = __ffs64(__pfm_m), true);			\
	     __pfm_m &= __pfm_m - 1)

/**
 * struct pfm_regdesc - one PMC or PMD
 * @name: register name, as in the processor's documentation
 * @type: PFM_REG_* flags; a register without PFM_REG_IMPL does not exist
 * @dfl_val: PMC: value after pfm_create_context(), and value of the
 *	reserved bits whatever user space writes
 * @rsvd_msk: PMC: reserved bits (a set bit is reserved)
 * @no_emul64_msk: PMC: bits cleared when PFM_REGFL_NO_EMUL64 is given
 *	(the overflow interrupt enable)
 * @kernel_msk: PMC: bits that make a counter count at the kernel's
 *	privilege level; setting one needs the right to count the kernel
 * @ctl: PMD: number of the PMC that controls the counter
 * @width: PMD: number of low bits the hardware counts into before the
 *	overflow interrupt; the upper bits live in software
 * @hw_width: PMD: number of bits the hardware counter implements
 * @addr: the register's address (an MSR on x86), for sysfs and the
 *	architecture code
 */
struct pfm_regdesc {
	const char	*name;
	u16		type;
	u16		ctl;
	u8		width;
	u8		hw_width;
	u64		dfl_val;
	u64		rsvd_msk;
	u64		no_emul64_msk;
	u64		kernel_msk;
	unsigned long	addr;
};

/**
 * struct pfm_pmu - a PMU as the perfmon core sees it
 * @model: name of the PMU model, shown in /sys/kernel/perfmon/pmu_desc/model
 * @pmc: PMC descriptions, indexed by PMC number
 * @pmd: PMD descriptions, indexed by PMD number
 * @num_pmcs: number of entries of @pmc (highest PMC number + 1)
 * @num_pmds: number of entries of @pmd (highest PMD number + 1)
 * @flags: PFM_PMU_* flags
 * @reserve: take the PMU from its other in-kernel user: 0 or -EBUSY
 * @release: give it back
 * @reset: stop every counter of this CPU and route its overflows to
 *	perfmon's interrupt; called on each CPU before its first use after
 *	@reserve
 * @cpu_starting: called on each CPU as it comes online, and on those
 *	online when perfmon starts: whether it has every register of the
 *	description (false for one brought online after boot whose PMU
 *	lacks some)
 * @write_pmc: write a PMC of this CPU
 * @write_pmd: write a PMD of this CPU; the value has every bit from the
 *	counter's width up to its hardware width set
 * @read_pmd: read a PMD of this CPU
 * @enable: let the counters of the PMDs in a bitmask count (the global
 *	enable, where the PMU has one)
 * @disable: stop every counter (the global disable, where the PMU has one)
 * @ack: acknowledge the overflows of the PMDs in a bitmask, after an
 *	overflow interrupt or when counters are saved
 * @rdpmc_users: which threads the platform lets read counters from user space
 *	(RDPMC on x86): PFM_RDPMC_NEVER, PFM_RDPMC_SELF (a thread while its
 *	own context is live) or PFM_RDPMC_ALWAYS (every thread)
 * @user_rdpmc: allow or forbid reading the counters from user space on
 *	this CPU
 * @take_cpu: take this CPU's counters from the other user's events, which
 *	step aside until @give_back_cpu: before a context goes live on a CPU
 *	whose PMU perfmon does not hold yet; the only operations set only
 *	for a PMU that perfmon shares (PFM_PMU_SHARED)
 * @give_back_cpu: give this CPU's counters back, all of them stopped and
 *	their event selects cleared
 *
 * Every operation must be set. All but @reserve and @release act on the
 * PMU of the calling CPU and are called with interrupts disabled or from
 * the overflow interrupt; the core calls those through static calls.
 */
struct pfm_pmu {
	const char			*model;
	const struct pfm_regdesc	*pmc;
	const struct pfm_regdesc	*pmd;
	unsigned int			num_pmcs;
	unsigned int			num_pmds;
	unsigned int			flags;

	int	(*reserve)(void);
	void	(*release)(void);
	void	(*reset)(void);
	bool	(*cpu_starting)(void);
	void	(*write_pmc)(unsigned int cnum, u64 value);
	void	(*write_pmd)(unsigned int cnum, u64 value);
	u64	(*read_pmd)(unsigned int cnum);
	void	(*enable)(u64 pmds);
	void	(*disable)(void);
	void	(*ack)(u64 pmds);
	unsigned int (*rdpmc_users)(void);
	void	(*user_rdpmc)(bool allow);
	void	(*take_cpu)(void);
	void	(*give_back_cpu)(void);
};

/* struct pfm_pmu.flags */
#define PFM_PMU_LATE_NMI	0x1	/* an overflow NMI per counter, maybe late */
#define PFM_PMU_GLOBAL_DISABLE	0x2	/* @disable stops every counter */
#define PFM_PMU_SHARED		0x4	/* the other user keeps counting */

/* struct pfm_pmu.rdpmc_users() */
#define PFM_RDPMC_NEVER		0
#define PFM_RDPMC_SELF		1
#define PFM_RDPMC_ALWAYS	2

int pfm_pmu_register(const struct pfm_pmu *pmu);
int pfm_interrupt(void);
void pfm_give_back_idle(void);

#endif /* _LINUX_PERFMON_PMU_H */
