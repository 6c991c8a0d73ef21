// SPDX-License-Identifier: GPL-2.0
/*
 * pmcount: a QEMU 7.2 TCG plugin that counts, between two marker
 * instructions the guest executes, per vCPU and in total:
 *
 *   - guest instructions executed, split kernel / user by the virtual
 *     address of the code (kernel: >= 0xffff800000000000; the 7.2 plugin API
 *     has no register access, so the CPL cannot be read);
 *   - RDMSR (0f 32), WRMSR (0f 30), RDPMC (0f 33) and writes to CR4
 *     (mov %reg,%cr4: 0f 22 with ModRM.reg = 4), each also per call site
 *     (guest virtual address), so that the host can name the kernel
 *     function that executed them (System.map).
 *
 * Markers (any privilege level, they are NOPs to the CPU):
 *   start: nopl 0x4d465001(%rax)   0f 1f 80 01 50 46 4d
 *   stop:  nopl 0x4d465002(%rax)   0f 1f 80 02 50 46 4d
 *
 * The window is global: the start marker, executed on any vCPU, opens it
 * for every vCPU, and the stop marker closes it for all. A ping-pong
 * between two threads on two CPUs does its work on both vCPUs, and a
 * wake-up on one CPU costs instructions (IPI, idle exit) on the other:
 * a per-vCPU window would miss half of it. The figures are still kept per
 * vCPU, so that a benchmark confined to one CPU can tell its own vCPU from
 * the background of the other one.
 *
 * Counting: one exec callback per translation block adds the block's
 * instruction count to the vCPU's counter (kernel or user), always; the
 * markers take snapshots, and a region is the difference. On the vCPU that
 * executes a marker the count is exact to the instruction: the instructions
 * of the marker's block that follow the start marker are included, the
 * stop marker and what follows it in its block are not; the markers
 * themselves are never counted. A block that stops in the middle (an
 * exception: page fault, #GP) has counted all its instructions: fault-free
 * code is exact, a faulting instruction and the rest of its block count
 * once more for each fault.
 *
 * Output: one JSON object per line and region, appended at each stop
 * marker to the file given by out=FILE (else to QEMU's log, stderr):
 *   {"seq":N,"start_vcpu":V,"stop_vcpu":V,"host_us":T,
 *    "vcpus":[{"ik":..,"iu":..,"rdmsr":..,"wrmsr":..,"rdpmc":..,"cr4":..},..],
 *    "sites":[["ffffffff81001234","wrmsr",[n_vcpu0,..],{"CALLER":[n_vcpu0,..],..}],..]}
 * seq counts the regions from 1 in the order they end; host_us is the
 * host's time between the two markers, in microseconds (TCG time, with the
 * plugin's own callbacks: for ratios within one boot). CALLER is the start
 * address of the translation block the vCPU executed before the block with
 * the instruction: for an instruction in an out-of-line helper (wrmsrl(),
 * native_write_cr4()) the block of its caller that ends with the call.
 *
 * Build: gcc -shared -fPIC -O2 $(pkg-config --cflags glib-2.0) -I DIR
 *        pmcount.c -o pmcount.so   (DIR holds this QEMU's qemu-plugin.h)
 * Use:   qemu-system-x86_64 -plugin ./pmcount.so,out=/tmp/regions.jsonl ...
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_BASE	0xffff800000000000ULL
#define MARK_START	0x4d465001u
#define MARK_STOP	0x4d465002u

enum ev { EV_IK, EV_IU, EV_RDMSR, EV_WRMSR, EV_RDPMC, EV_CR4, EV_NR };
static const char *const ev_name[EV_NR] = {
	"ik", "iu", "rdmsr", "wrmsr", "rdpmc", "cr4"
};

/* per vCPU, one cache line each: only its own vCPU thread writes it */
struct vcpu {
	uint64_t c[EV_NR];
	uint64_t snap[EV_NR];
	uint64_t tb, prev_tb;	/* start of the current TB and of the one before */
} __attribute__((aligned(64)));

struct site {
	uint64_t vaddr;
	enum ev ev;
	uint64_t *count;	/* [nvcpu] */
	uint64_t *snap;		/* [nvcpu] */
	GHashTable *callers;	/* caller TB -> struct caller */
};

/*
 * The TB that ran before the one with the instruction, on the same vCPU:
 * for an instruction at the start of an out-of-line helper (wrmsrl,
 * native_write_cr4) the block of its caller that ends with the call.
 */
struct caller {
	uint64_t tb;
	uint64_t *count;	/* [nvcpu], cumulative */
	uint64_t *snap;
};

/* a TB: its instruction count and class (kernel or user) */
struct tbinfo {
	uint64_t pc;
	uint32_t n;
	enum ev cls;
};

/* a marker in a TB: what follows it in the TB (already counted) */
struct marker {
	int start;
	uint32_t after;		/* instructions of the TB after the marker */
	enum ev cls;
};

static struct vcpu *vcpus;
static int nvcpu;
static GMutex lock;		/* sites table, TB infos, output */
static GHashTable *sites;	/* vaddr -> struct site */
static GPtrArray *site_list;
static GHashTable *tbinfos;	/* (vaddr, n) -> struct tbinfo, shared */
static FILE *out;
static int active = 0, start_vcpu = -1;
static unsigned long seq;
static gint64 start_us;		/* host time of the start marker */

static void tb_exec(unsigned int vi, void *ud)
{
	const struct tbinfo *t = ud;
	struct vcpu *v = &vcpus[vi];

	v->c[t->cls] += t->n;
	v->prev_tb = v->tb;
	v->tb = t->pc;
}

static void site_exec(unsigned int vi, void *ud)
{
	struct site *s = ud;
	struct vcpu *v = &vcpus[vi];
	/* v->tb is the TB of the instruction: its exec callback ran first */
	uint64_t from = v->prev_tb;
	struct caller *c;

	s->count[vi]++;
	v->c[s->ev]++;
	g_mutex_lock(&lock);
	c = g_hash_table_lookup(s->callers, &from);
	if (!c) {
		c = g_new0(struct caller, 1);
		c->tb = from;
		c->count = g_new0(uint64_t, nvcpu);
		c->snap = g_new0(uint64_t, nvcpu);
		g_hash_table_insert(s->callers, &c->tb, c);
	}
	c->count[vi]++;
	g_mutex_unlock(&lock);
}

static void emit(unsigned int stop_vi)
{
	GString *g = g_string_new(NULL);
	int v, e;
	guint i;

	g_string_append_printf(g, "{\"seq\":%lu,\"start_vcpu\":%d,\"stop_vcpu\":%u,\"host_us\":%" PRId64 ",\"vcpus\":[",
			       seq, start_vcpu, stop_vi, g_get_monotonic_time() - start_us);
	for (v = 0; v < nvcpu; v++) {
		g_string_append_printf(g, "%s{", v ? "," : "");
		for (e = 0; e < EV_NR; e++)
			g_string_append_printf(g, "%s\"%s\":%" PRIu64, e ? "," : "",
					       ev_name[e],
					       vcpus[v].c[e] - vcpus[v].snap[e]);
		g_string_append(g, "}");
	}
	g_string_append(g, "],\"sites\":[");
	int first = 1;
	for (i = 0; i < site_list->len; i++) {
		struct site *s = g_ptr_array_index(site_list, i);
		uint64_t tot = 0;

		for (v = 0; v < nvcpu; v++)
			tot += s->count[v] - s->snap[v];
		if (!tot)
			continue;
		g_string_append_printf(g, "%s[\"%" PRIx64 "\",\"%s\",[", first ? "" : ",",
				       s->vaddr, ev_name[s->ev]);
		first = 0;
		for (v = 0; v < nvcpu; v++)
			g_string_append_printf(g, "%s%" PRIu64, v ? "," : "",
					       s->count[v] - s->snap[v]);
		g_string_append(g, "],{");
		GHashTableIter it;
		gpointer k, val;
		int cfirst = 1;

		g_hash_table_iter_init(&it, s->callers);
		while (g_hash_table_iter_next(&it, &k, &val)) {
			struct caller *c = val;
			int any = 0;

			for (v = 0; v < nvcpu; v++)
				any |= c->count[v] != c->snap[v];
			if (!any)
				continue;
			g_string_append_printf(g, "%s\"%" PRIx64 "\":[", cfirst ? "" : ",", c->tb);
			cfirst = 0;
			for (v = 0; v < nvcpu; v++)
				g_string_append_printf(g, "%s%" PRIu64, v ? "," : "",
						       c->count[v] - c->snap[v]);
			g_string_append(g, "]");
		}
		g_string_append(g, "}]");
	}
	g_string_append(g, "]}\n");
	if (out) {
		fputs(g->str, out);
		fflush(out);
	} else {
		qemu_plugin_outs(g->str);
	}
	g_string_free(g, TRUE);
}

static void marker_exec(unsigned int vi, void *ud)
{
	const struct marker *m = ud;
	int v;
	guint i;

	g_mutex_lock(&lock);
	if (m->start) {
		for (v = 0; v < nvcpu; v++)
			memcpy(vcpus[v].snap, vcpus[v].c, sizeof(vcpus[v].c));
		/* the rest of this TB is already counted and belongs to the region */
		vcpus[vi].snap[m->cls] -= m->after;
		for (i = 0; i < site_list->len; i++) {
			struct site *s = g_ptr_array_index(site_list, i);

			GHashTableIter it;
			gpointer k, val;

			memcpy(s->snap, s->count, nvcpu * sizeof(uint64_t));
			g_hash_table_iter_init(&it, s->callers);
			while (g_hash_table_iter_next(&it, &k, &val)) {
				struct caller *c = val;

				memcpy(c->snap, c->count, nvcpu * sizeof(uint64_t));
			}
		}
		active = 1;
		start_vcpu = vi;
		start_us = g_get_monotonic_time();
	} else if (active) {
		/* neither the stop marker nor what follows it in its TB */
		vcpus[vi].c[m->cls] -= m->after + 1;
		seq++;
		emit(vi);
		vcpus[vi].c[m->cls] += m->after + 1;
		active = 0;
	} else {
		qemu_plugin_outs("pmcount: stop marker without a start marker, ignored\n");
	}
	g_mutex_unlock(&lock);
}

/* The opcode after legacy prefixes and REX; NULL if none fits. */
static const uint8_t *opcode(const uint8_t *p, size_t len, size_t *rest)
{
	size_t i = 0;

	while (i < len && (p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf0 ||
			   p[i] == 0xf2 || p[i] == 0xf3 || p[i] == 0x2e ||
			   p[i] == 0x36 || p[i] == 0x3e || p[i] == 0x26 ||
			   p[i] == 0x64 || p[i] == 0x65))
		i++;
	if (i < len && (p[i] & 0xf0) == 0x40)
		i++;
	*rest = len - i;
	return i < len ? p + i : NULL;
}

static struct site *site_get(uint64_t vaddr, enum ev ev)
{
	struct site *s = g_hash_table_lookup(sites, &vaddr);

	if (!s) {
		s = g_new0(struct site, 1);
		s->vaddr = vaddr;
		s->ev = ev;
		s->count = g_new0(uint64_t, nvcpu);
		s->snap = g_new0(uint64_t, nvcpu);
		s->callers = g_hash_table_new(g_int64_hash, g_int64_equal);
		g_hash_table_insert(sites, &s->vaddr, s);
		g_ptr_array_add(site_list, s);
	}
	return s;
}

/* TB infos are shared by every translation of the same (vaddr, n, class). */
static struct tbinfo *tbinfo_get(uint64_t vaddr, uint32_t n, enum ev cls)
{
	uint64_t key = vaddr ^ ((uint64_t)n << 1);	/* kernel/user differ in vaddr */
	struct tbinfo *t;
	uint64_t *k;

	t = g_hash_table_lookup(tbinfos, &key);
	if (t && t->pc == vaddr && t->n == n && t->cls == cls)
		return t;
	/* collision or first time: a new one (never freed, TBs may use it) */
	t = g_new(struct tbinfo, 1);
	t->pc = vaddr;
	t->n = n;
	t->cls = cls;
	k = g_new(uint64_t, 1);
	*k = key;
	g_hash_table_replace(tbinfos, k, t);
	return t;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t pc = qemu_plugin_tb_vaddr(tb);
	enum ev cls = pc >= KERNEL_BASE ? EV_IK : EV_IU;

	g_mutex_lock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     tbinfo_get(pc, n, cls));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *p = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn), rest;
		const uint8_t *op = opcode(p, len, &rest);
		int ev = -1;

		if (!op || rest < 2 || op[0] != 0x0f)
			continue;
		switch (op[1]) {
		case 0x30: ev = EV_WRMSR; break;
		case 0x32: ev = EV_RDMSR; break;
		case 0x33: ev = EV_RDPMC; break;
		case 0x22:
			if (rest >= 3 && ((op[2] >> 3) & 7) == 4)
				ev = EV_CR4;
			break;
		case 0x1f:
			if (rest == 7 && op[2] == 0x80) {
				uint32_t d;

				memcpy(&d, op + 3, 4);
				if (d == MARK_START || d == MARK_STOP) {
					struct marker *m = g_new(struct marker, 1);

					m->start = d == MARK_START;
					m->after = n - i - 1;
					m->cls = cls;
					/* markers are NOPs: not counted */
					qemu_plugin_register_vcpu_insn_exec_cb(
						insn, marker_exec,
						QEMU_PLUGIN_CB_NO_REGS, m);
				}
			}
			break;
		}
		if (ev >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, site_exec, QEMU_PLUGIN_CB_NO_REGS,
				site_get(qemu_plugin_insn_vaddr(insn), ev));
	}
	g_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out = fopen(argv[i] + 4, "a");
			if (!out) {
				perror(argv[i] + 4);
				return -1;
			}
		} else {
			fprintf(stderr, "pmcount: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (info->system_emulation)
		nvcpu = info->system.max_vcpus;
	if (nvcpu < 1)
		nvcpu = 1;
	vcpus = aligned_alloc(64, nvcpu * sizeof(*vcpus));
	if (!vcpus)
		return -1;
	memset(vcpus, 0, nvcpu * sizeof(*vcpus));
	sites = g_hash_table_new(g_int64_hash, g_int64_equal);
	site_list = g_ptr_array_new();
	tbinfos = g_hash_table_new(g_int64_hash, g_int64_equal);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
