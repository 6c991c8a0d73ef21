// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the 64-bit virtualization arithmetic of perfmon.
 */

#include <kunit/test.h>

#include "counter.h"

static void pfm_test_ovfl_mask(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pfm_ovfl_mask(31), 0x7fffffffULL);
	KUNIT_EXPECT_EQ(test, pfm_ovfl_mask(47), 0x7fffffffffffULL);
	KUNIT_EXPECT_EQ(test, pfm_ovfl_mask(64), ~0ULL);
}

/* Intel legacy writes: 31 bits counted, bits 31 to 39 set. */
static void pfm_test_hw_value_intel_legacy(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pfm_hw_value(0, 31, 40), 0xff80000000ULL);
	KUNIT_EXPECT_EQ(test, pfm_hw_value(0x7fffffff, 31, 40), 0xffffffffffULL);
	KUNIT_EXPECT_EQ(test, pfm_hw_value(0x123456789ULL, 31, 40),
			0xffa3456789ULL);
	KUNIT_EXPECT_EQ(test, pfm_hw_value(~0ULL, 31, 40), 0xffffffffffULL);
}

/* Full-width counters (AMD, Intel fixed and A_PMCx): one bit kept set. */
static void pfm_test_hw_value_full_width(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pfm_hw_value(5, 47, 48), 0x800000000005ULL);
	KUNIT_EXPECT_EQ(test, pfm_hw_value(0xffff800000000005ULL, 47, 48),
			0x800000000005ULL);
	KUNIT_EXPECT_EQ(test, pfm_hw_value(0, 39, 40), 0x8000000000ULL);
}

static void pfm_test_combine(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pfm_combine(0x1234500000000ULL, 0xff80000007ULL, 31),
			0x1234500000007ULL);
	KUNIT_EXPECT_EQ(test, pfm_combine(~0ULL, 0, 47), 0xffff800000000000ULL);
}

static void pfm_test_overflowed(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, pfm_overflowed(0xff80000000ULL, 31));
	KUNIT_EXPECT_FALSE(test, pfm_overflowed(0xffffffffffULL, 31));
	KUNIT_EXPECT_TRUE(test, pfm_overflowed(0, 31));
	KUNIT_EXPECT_TRUE(test, pfm_overflowed(0x7fffffffULL, 31));
	KUNIT_EXPECT_TRUE(test, pfm_overflowed(3, 47));
	KUNIT_EXPECT_FALSE(test, pfm_overflowed(0x800000000003ULL, 47));
}

/*
 * Count @events on a simulated counter of @hw_width bits, starting from
 * the 64-bit @value, with an overflow interrupt at every wrap, and return
 * the 64-bit value read at the end.
 */
static u64 pfm_simulate(u64 value, u64 events, unsigned int width,
			unsigned int hw_width)
{
	u64 hw_mask = pfm_ovfl_mask(hw_width);
	u64 hw = pfm_hw_value(value, width, hw_width);
	bool ovfl;

	while (events) {
		/* events until the hardware wraps */
		u64 room = (hw_mask - hw) + 1;
		u64 step = min(events, room);

		hw = (hw + step) & hw_mask;
		events -= step;
		if (step == room) {
			/* the interrupt: fold and re-arm */
			value = pfm_fold(value, hw, width, true, &ovfl);
			if (!ovfl)
				return 0;
			hw = pfm_hw_value(hw, width, hw_width);
		}
	}
	return pfm_combine(value, hw, width);
}

static void pfm_test_virtualization(struct kunit *test)
{
	static const struct {
		unsigned int width, hw_width;
	} w[] = { { 31, 40 }, { 39, 40 }, { 47, 48 } };
	static const u64 starts[] = { 0, 1, 0x7ffffff0ULL, 0x80000000ULL,
				      0x7fffffffffffULL, 0xfffffffffffffff0ULL };
	static const u64 counts[] = { 0, 1, 15, 16, 0x80000000ULL,
				      0x1000000000ULL, 0x3ffffffffffffULL };
	unsigned int i, j, k;

	u64 got;

	for (i = 0; i < ARRAY_SIZE(w); i++) {
		for (j = 0; j < ARRAY_SIZE(starts); j++) {
			for (k = 0; k < ARRAY_SIZE(counts); k++) {
				got = pfm_simulate(starts[j], counts[k],
						   w[i].width, w[i].hw_width);
				KUNIT_EXPECT_EQ_MSG(test, got,
						    starts[j] + counts[k],
						    "width %u start %llx count %llx",
						    w[i].width, starts[j],
						    counts[k]);
			}
		}
	}
}

/* Without 64-bit virtualization the value wraps at the counter width. */
static void pfm_test_no_emul64(struct kunit *test)
{
	u64 hw = pfm_hw_value(0x7ffffff6ULL, 31, 40);
	bool ovfl;

	hw = (hw + 100) & pfm_ovfl_mask(40);
	KUNIT_EXPECT_EQ(test, pfm_fold(0x7ffffff6ULL, hw, 31, false, &ovfl),
			90ULL);
	KUNIT_EXPECT_FALSE(test, ovfl);
}

static struct kunit_case pfm_counter_cases[] = {
	KUNIT_CASE(pfm_test_ovfl_mask),
	KUNIT_CASE(pfm_test_hw_value_intel_legacy),
	KUNIT_CASE(pfm_test_hw_value_full_width),
	KUNIT_CASE(pfm_test_combine),
	KUNIT_CASE(pfm_test_overflowed),
	KUNIT_CASE(pfm_test_virtualization),
	KUNIT_CASE(pfm_test_no_emul64),
	{}
};

static struct kunit_suite pfm_counter_suite = {
	.name = "perfmon_counter",
	.test_cases = pfm_counter_cases,
};

kunit_test_suite(pfm_counter_suite);

MODULE_DESCRIPTION("KUnit tests of the perfmon counter arithmetic");
MODULE_LICENSE("GPL");
