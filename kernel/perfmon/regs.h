/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Access to the PMCs and PMDs of a context, and starting and stopping.
 */
#ifndef _KERNEL_PERFMON_REGS_H
#define _KERNEL_PERFMON_REGS_H

struct pfm_context;
struct pfarg_pmc;
struct pfarg_pmd;
struct pfarg_setdesc;
struct pfarg_setinfo;

int pfm_write_pmcs(struct pfm_context *ctx, struct pfarg_pmc *req, int count);
int pfm_write_pmds(struct pfm_context *ctx, struct pfarg_pmd *req, int count);
int pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req, int count);
int pfm_start(struct pfm_context *ctx);
int pfm_stop(struct pfm_context *ctx);
/* its event set, set 0 */
int pfm_create_evtsets(struct pfm_context *ctx, const struct pfarg_setdesc *req,
		       int count);
int pfm_getinfo_evtsets(struct pfm_context *ctx, struct pfarg_setinfo *info,
			int count);

#endif /* _KERNEL_PERFMON_REGS_H */
