/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * perfmon2 per-thread performance monitoring interface, v2.8x ABI.
 *
 * The layout of every structure below is part of the ABI spoken by
 * libpfm-3.x and by the tools built on it. All 64-bit fields sit at
 * naturally aligned offsets, so i386, x32 and x86_64 share one layout and
 * no compat entry points are needed.
 *
 * The ABI is frozen: it is the one the tools were built against, and no
 * later version will give meaning to the fields named *_reserved*. The
 * calls ignore them, whatever they hold (some tools do not clear them),
 * and never write them back. Fields with a meaning that this interface
 * does not implement (event sets, sampling, flags) are checked instead.
 */
#ifndef _UAPI_LINUX_PERFMON_H
#define _UAPI_LINUX_PERFMON_H

#include <linux/types.h>

/* Version of the interface, as /sys/kernel/perfmon/version reports it. */
#define PFM_VERSION_MAJOR	2
#define PFM_VERSION_MINOR	82

/*
 * Register numbers go up to PFM_MAX_PMCS - 1 and PFM_MAX_PMDS - 1.
 * Register bitmaps are arrays of PFM_REG_BV 64-bit words.
 */
#define PFM_MAX_PMCS		320
#define PFM_MAX_PMDS		320
#define PFM_REG_BV		(PFM_MAX_PMDS / 64)

/*
 * Flags of struct pfarg_ctx.ctx_flags. Bits 0-15 are generic, bits 16-31
 * belong to the architecture.
 */
#define PFM_FL_NOTIFY_BLOCK	0x01	/* removed: always EINVAL */
#define PFM_FL_SYSTEM_WIDE	0x02	/* removed: always EINVAL */
#define PFM_FL_OVFL_NO_MSG	0x80	/* accepted: no message is ever sent */
#define PFM_FL_INHERIT		0x0100	/* follow the tasks the thread creates */
#define PFM_FL_INHERIT_THREAD	0x0200	/* with PFM_FL_INHERIT: threads only */
#define PFM_FL_FD_CLOEXEC	0x4000	/* the context fd is close-on-exec */

/* Flags of struct pfarg_pmc.reg_flags and struct pfarg_pmd.reg_flags. */
#define PFM_REGFL_OVFL_NOTIFY	0x1	/* PMD: removed, EINVAL */
#define PFM_REGFL_RANDOM	0x2	/* PMD: removed, EINVAL */
#define PFM_REGFL_NO_EMUL64	0x4	/* PMC: no 64-bit virtualization */
#define PFM_REGFL_SELF		0x8	/* PMD read, PFM_FL_INHERIT: own value */

/**
 * struct pfarg_ctx - argument of pfm_create_context()
 * @ctx_flags: PFM_FL_* flags
 * @ctx_reserved1: reserved, ignored
 * @ctx_reserved2: reserved, ignored
 *
 * 64 bytes.
 */
struct pfarg_ctx {
	__u32	ctx_flags;
	__u32	ctx_reserved1;
	__u64	ctx_reserved2[7];
};

/**
 * struct pfarg_pmc - one configuration register, for pfm_write_pmcs()
 * @reg_num: PMC number, in the numbering of the PMU description
 * @reg_set: event set, must be zero (event sets were removed)
 * @reg_flags: PFM_REGFL_* flags that apply to a PMC
 * @reg_value: value to write; reserved bits are replaced by their defaults
 * @reg_reserved2: reserved, ignored
 *
 * 48 bytes.
 */
struct pfarg_pmc {
	__u16	reg_num;
	__u16	reg_set;
	__u32	reg_flags;
	__u64	reg_value;
	__u64	reg_reserved2[4];
};

/**
 * struct pfarg_pmd - one data register, for pfm_write_pmds()/pfm_read_pmds()
 * @reg_num: PMD number, in the numbering of the PMU description
 * @reg_set: event set, must be zero (event sets were removed)
 * @reg_flags: PFM_REGFL_* flags that apply to a PMD
 * @reg_value: 64-bit value, written or read back
 * @reg_long_reset: sampling only, unused
 * @reg_short_reset: sampling only, unused
 * @reg_last_reset_val: sampling only, unused
 * @reg_ovfl_switch_cnt: event sets only, unused
 * @reg_reset_pmds: sampling only, unused
 * @reg_smpl_pmds: sampling only, unused
 * @reg_smpl_eventid: sampling only, unused
 * @reg_random_mask: sampling only, unused
 * @reg_random_seed: sampling only, unused
 * @reg_reserved2: reserved, ignored
 *
 * 176 bytes.
 */
struct pfarg_pmd {
	__u16	reg_num;
	__u16	reg_set;
	__u32	reg_flags;
	__u64	reg_value;
	__u64	reg_long_reset;
	__u64	reg_short_reset;
	__u64	reg_last_reset_val;
	__u64	reg_ovfl_switch_cnt;
	__u64	reg_reset_pmds[PFM_REG_BV];
	__u64	reg_smpl_pmds[PFM_REG_BV];
	__u64	reg_smpl_eventid;
	__u64	reg_random_mask;
	__u32	reg_random_seed;
	__u32	reg_reserved2[7];
};

/**
 * struct pfarg_load - argument of pfm_load_context()
 * @load_pid: thread to attach to, a thread id as gettid() returns it
 * @load_set: event set, must be zero (event sets were removed)
 * @load_reserved1: reserved, ignored
 * @load_reserved2: reserved, ignored
 *
 * 32 bytes.
 */
struct pfarg_load {
	__u32	load_pid;
	__u16	load_set;
	__u16	load_reserved1;
	__u64	load_reserved2[3];
};

/**
 * struct pfarg_start - optional argument of pfm_start()
 * @start_set: event set, must be zero (event sets were removed)
 * @start_reserved1: reserved, ignored
 * @start_reserved2: reserved, ignored
 * @start_reserved3: reserved, ignored
 *
 * 32 bytes. Tools pass NULL instead.
 */
struct pfarg_start {
	__u16	start_set;
	__u16	start_reserved1;
	__u32	start_reserved2;
	__u64	start_reserved3[3];
};

/*
 * Event sets. A context has one, set 0, which always exists; switching
 * between sets was removed, and with it every flag below.
 */
#define PFM_SETFL_OVFL_SWITCH	0x02	/* removed: EINVAL */
#define PFM_SETFL_TIME_SWITCH	0x04	/* removed: EINVAL */

/**
 * struct pfarg_setdesc - argument of pfm_create_evtsets()
 * @set_id: event set, must be zero
 * @set_reserved1: reserved, ignored
 * @set_flags: PFM_SETFL_* flags, must be zero
 * @set_timeout: switch timeout with PFM_SETFL_TIME_SWITCH only, ignored
 * @set_reserved2: reserved, ignored
 *
 * 64 bytes.
 */
struct pfarg_setdesc {
	__u16	set_id;
	__u16	set_reserved1;
	__u32	set_flags;
	__u64	set_timeout;
	__u64	set_reserved2[6];
};

/**
 * struct pfarg_setinfo - argument of pfm_getinfo_evtsets()
 * @set_id: event set, must be zero
 * @set_reserved1: reserved, ignored and not written
 * @set_flags: out: the set's PFM_SETFL_* flags, 0
 * @set_ovfl_pmds: out: overflow notification only, 0
 * @set_runs: out: how many times the set became active: the loads of the
 *	context
 * @set_timeout: out: switching between sets only, 0
 * @set_act_duration: out: how long the set was active, in nanoseconds: the
 *	time its thread ran with monitoring started
 * @set_avail_pmcs: out: the PMCs a context may program, bit n for PMC n
 * @set_avail_pmds: out: the PMDs a context may use, bit n for PMD n
 * @set_reserved3: reserved, ignored and not written
 *
 * 200 bytes.
 */
struct pfarg_setinfo {
	__u16	set_id;
	__u16	set_reserved1;
	__u32	set_flags;
	__u64	set_ovfl_pmds[PFM_REG_BV];
	__u64	set_runs;
	__u64	set_timeout;
	__u64	set_act_duration;
	__u64	set_avail_pmcs[PFM_REG_BV];
	__u64	set_avail_pmds[PFM_REG_BV];
	__u64	set_reserved3[6];
};

#endif /* _UAPI_LINUX_PERFMON_H */
