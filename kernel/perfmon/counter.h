/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 64-bit virtualization of the hardware counters: the arithmetic.
 *
 * A counter PMD has a 64-bit value in memory; the hardware counts only its
 * low @width bits. The hardware counter is loaded with those low bits and
 * every bit from @width up to its hardware width set, so that it wraps,
 * and raises the overflow interrupt, after at most 2^@width events. The
 * interrupt adds 2^@width to the value in memory and sets the upper bits
 * of the hardware counter again, keeping the low bits it has counted.
 */
#ifndef _KERNEL_PERFMON_COUNTER_H
#define _KERNEL_PERFMON_COUNTER_H

#include <linux/bits.h>
#include <linux/types.h>

/* The bits a counter of @width bits counts into. */
static inline u64 pfm_ovfl_mask(unsigned int width)
{
	return width >= 64 ? ~0ULL : BIT_ULL(width) - 1;
}

/* What to load into a hardware counter of @hw_width bits for @value. */
static inline u64 pfm_hw_value(u64 value, unsigned int width,
			       unsigned int hw_width)
{
	u64 mask = pfm_ovfl_mask(width);

	return ((value & mask) | ~mask) & pfm_ovfl_mask(hw_width);
}

/* The 64-bit value of a counter whose hardware holds @hw. */
static inline u64 pfm_combine(u64 value, u64 hw, unsigned int width)
{
	u64 mask = pfm_ovfl_mask(width);

	return (value & ~mask) | (hw & mask);
}

/* Has the hardware counter wrapped since it was loaded or re-armed? */
static inline bool pfm_overflowed(u64 hw, unsigned int width)
{
	return !(hw & BIT_ULL(width));
}

/*
 * Fold the hardware value @hw into the 64-bit @value: add the overflow the
 * hardware shows, unless the counter is not virtualized (@emul64 false),
 * and take its low bits. Sets *@ovfl when an overflow was added.
 */
static inline u64 pfm_fold(u64 value, u64 hw, unsigned int width, bool emul64,
			   bool *ovfl)
{
	*ovfl = emul64 && pfm_overflowed(hw, width);
	if (*ovfl)
		value += BIT_ULL(width);
	return pfm_combine(value, hw, width);
}

#endif /* _KERNEL_PERFMON_COUNTER_H */
