// SPDX-License-Identifier: GPL-2.0
/*
 * lvtpc-probe: a bare-metal multiboot guest that checks PMI delivery through
 * the local APIC LVTPC entry, which Linux cannot show from user space:
 * fixed-vector and NMI delivery modes, one PMI per overflow, the Intel
 * auto-mask of LVTPC after delivery (none on AMD), no PMI while LVTPC is
 * masked or INT is clear; with AMD PerfMonV2 also the reset value of
 * PerfCntrGlobalCtl, the status bit and the gate on the legacy PERF_CTL0
 * the probe programs.  Output: TAP lines on the debugcon port 0xe9;
 * exit through isa-debug-exit (0xf4).
 *
 * Build: gcc -m32 -ffreestanding -fno-pic -no-pie -fno-stack-protector -nostdlib \
 *            -static -O2 -Wl,-Ttext=0x100000 -Wl,--build-id=none \
 *            -o lvtpc-probe.elf lvtpc-probe.c
 * Run:   qemu-system-x86_64 -accel tcg -cpu MODEL,pmu=on -kernel lvtpc-probe.elf \
 *            -debugcon stdio -device isa-debug-exit,iobase=0xf4,iosize=4 ...
 */
typedef unsigned int u32;
typedef unsigned long long u64;

/* multiboot v1 header (QEMU -kernel loads the ELF segments) */
asm(".section .text.mb,\"ax\"\n"
    ".align 4\n"
    ".long 0x1BADB002, 0, -0x1BADB002\n"
    ".text\n");

static inline void outb(unsigned short p, unsigned char v)
{
	asm volatile("outb %0, %1" :: "a"(v), "Nd"(p));
}

static inline void outl(unsigned short p, u32 v)
{
	asm volatile("outl %0, %1" :: "a"(v), "Nd"(p));
}

static inline void wrmsr(u32 i, u64 v)
{
	asm volatile("wrmsr" :: "c"(i), "a"((u32)v), "d"((u32)(v >> 32)));
}

static inline u64 rdmsr(u32 i)
{
	u32 lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(i));
	return lo | (u64)hi << 32;
}

static inline void cpuid(u32 l, u32 r[4])
{
	asm volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(l), "c"(0));
}

static void puts(const char *s)
{
	while (*s)
		outb(0xe9, *s++);
}

static void putu(u32 v)
{
	char b[12];
	int i = 11;

	b[i] = 0;
	do {
		b[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	puts(b + i);
}

static int testno, fails;

static void result(int ok, const char *name)
{
	testno++;
	if (!ok)
		fails++;
	puts(ok ? "ok " : "not ok ");
	putu(testno);
	puts(" ");
	puts(name);
	puts("\n");
}

#define APIC ((volatile u32 *)0xfee00000)
#define LVTPC (0x340 / 4)
#define SVR (0xf0 / 4)
#define EOI (0xb0 / 4)
#define MASKED (1u << 16)
#define PMI_VECTOR 0x40

static volatile u32 n_fixed, n_nmi, lvtpc_seen;
static int amd, amd_v2;
static u32 ctl0, ctr0;          /* MSRs of counter 0 */
static volatile u64 rearm;             /* re-arm value in the handler, 0: none */

void pmi_common(int nmi);
void pmi_common(int nmi)
{
	lvtpc_seen = APIC[LVTPC];
	if (nmi)
		n_nmi++;
	else
		n_fixed++;
	if (rearm) {
		wrmsr(ctr0, rearm);
		if (!amd)
			wrmsr(0x390, 1);        /* clear GLOBAL_STATUS bit 0 */
		else if (amd_v2)
			wrmsr(0xc0000302, 1);   /* PerfCntrGlobalStatusClr */
		APIC[LVTPC] = lvtpc_seen & ~MASKED;     /* like Linux: unmask */
	}
	if (!nmi)
		APIC[EOI] = 0;
}

asm(".text\n"
    "fixed_entry: pusha; push $0; call pmi_common; add $4, %esp; popa; iret\n"
    "nmi_entry: pusha; push $1; call pmi_common; add $4, %esp; popa; iret\n"
    "other_entry: hlt; jmp other_entry\n");
extern char fixed_entry[], nmi_entry[], other_entry[];

static u64 gdt[3] = { 0, 0x00cf9a000000ffffULL, 0x00cf92000000ffffULL };
static u64 idt[256];

static void set_gate(int v, void *h)
{
	u32 a = (u32)h;

	idt[v] = (a & 0xffff) | (0x08u << 16) | ((u64)0x8e00 << 32) | ((u64)(a >> 16) << 48);
}

static void setup(void)
{
	struct __attribute__((packed)) { unsigned short l; u32 b; } d;

	d.l = sizeof(gdt) - 1;
	d.b = (u32)gdt;
	asm volatile("lgdt %0; ljmp $0x08, $1f; 1: mov $0x10, %%ax; mov %%ax, %%ds;"
		     "mov %%ax, %%es; mov %%ax, %%ss" :: "m"(d) : "eax", "memory");
	for (int i = 0; i < 256; i++)
		set_gate(i, other_entry);
	set_gate(2, nmi_entry);
	set_gate(PMI_VECTOR, fixed_entry);
	d.l = sizeof(idt) - 1;
	d.b = (u32)idt;
	asm volatile("lidt %0" :: "m"(d));
	/* mask the PIC, software-enable the local APIC */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	APIC[SVR] = 0x1ff;
}

static void spin(u32 n)
{
	asm volatile("1: dec %0; jnz 1b" : "+r"(n) :: "cc");
}

/* counter 0: instructions, OS+USR, EN, optional INT; start at -left */
static void arm(u32 left, int intr)
{
	u64 mask = (1ULL << 48) - 1;

	wrmsr(ctl0, 0);
	if (!amd) {
		wrmsr(0x38f, 0);
		wrmsr(0x390, 0x70000000fULL & rdmsr(0x38e));
	} else if (amd_v2) {
		wrmsr(0xc0000302, 1);   /* PerfCntrGlobalStatusClr */
	}
	/* legacy IA32_PMC0 write: sign extension gives -left at any width */
	wrmsr(ctr0, amd ? ((0 - (u64)left) & mask) : (u32)(0 - left));
	wrmsr(ctl0, 0x4300c0 | (intr ? 0x100000 : 0));
	if (!amd)
		wrmsr(0x38f, 1);
}

static void disarm(void)
{
	wrmsr(ctl0, 0);
	if (!amd)
		wrmsr(0x38f, 0);
}

void main(void);
void main(void)
{
	u32 r[4];
	u32 v;

	setup();
	cpuid(0, r);
	amd = r[1] == 0x68747541;
	ctl0 = amd ? 0xc0010000 : 0x186;
	ctr0 = amd ? 0xc0010004 : 0xc1;
	if (amd) {
		cpuid(0x80000000, r);
		if (r[0] >= 0x80000022) {
			cpuid(0x80000022, r);
			amd_v2 = r[0] & 1;
		}
	}
	puts(amd ? (amd_v2 ? "# AMD PerfMonV2\n" : "# AMD\n") : "# Intel\n");
	/*
	 * Nothing has written PerfCntrGlobalCtl yet, and the tests below never
	 * do before the last one: they pass only if it resets to all enabled.
	 */
	if (amd_v2)
		result(rdmsr(0xc0000301) == 0x3f,
		       "PerfCntrGlobalCtl reset value: all 6 counters enabled");

	/* 1: fixed delivery mode, one PMI, auto-mask on Intel only */
	APIC[LVTPC] = PMI_VECTOR;
	n_fixed = n_nmi = 0;
	arm(100, 1);
	asm volatile("sti");
	spin(1000);
	asm volatile("cli");
	disarm();
	v = APIC[LVTPC];
	result(n_fixed == 1 && n_nmi == 0, "fixed-vector PMI delivered once");
	result(amd ? !(lvtpc_seen & MASKED) : !!(lvtpc_seen & MASKED),
	       amd ? "AMD: LVTPC not masked by delivery" : "Intel: LVTPC masked by delivery");
	if (!amd)
		result((rdmsr(0x38e) & 1) == 1, "GLOBAL_STATUS bit 0 set by the overflow");
	if (amd_v2)
		result((rdmsr(0xc0000300) & 0x3f) == 1,
		       "PerfCntrGlobalStatus bit 0 set by the overflow");

	/* 2: while LVTPC is masked an overflow raises no PMI */
	APIC[LVTPC] = PMI_VECTOR | MASKED;
	n_fixed = 0;
	arm(100, 1);
	asm volatile("sti");
	spin(1000);
	asm volatile("cli");
	disarm();
	result(n_fixed == 0, "no PMI while LVTPC is masked");
	(void)v;

	/* 3: INT clear: no PMI */
	APIC[LVTPC] = PMI_VECTOR;
	n_fixed = 0;
	arm(100, 0);
	asm volatile("sti");
	spin(1000);
	asm volatile("cli");
	disarm();
	result(n_fixed == 0, "no PMI without INT");

	/* 4: NMI delivery mode */
	APIC[LVTPC] = 0x400;
	n_fixed = n_nmi = 0;
	arm(100, 1);
	spin(1000);
	disarm();
	result(n_nmi == 1 && n_fixed == 0, "NMI-mode PMI delivered once");
	result(amd ? !(lvtpc_seen & MASKED) : !!(lvtpc_seen & MASKED),
	       amd ? "AMD: LVTPC not masked by NMI delivery" : "Intel: LVTPC masked by NMI delivery");

	/* 5: one PMI per overflow: period 1000, handler re-arms and unmasks */
	APIC[LVTPC] = 0x400;
	n_nmi = 0;
	rearm = amd ? ((1ULL << 48) - 1000) : (u32)(0 - 1000);
	arm(1000, 1);
	spin(50000);            /* 100000 instructions + handlers */
	disarm();
	rearm = 0;
	puts("# PMIs for ~100000 instructions at period 1000: ");
	putu(n_nmi);
	puts("\n");
	result(n_nmi >= 95 && n_nmi <= 120, "one PMI per overflow (NMI mode, re-armed)");

	/*
	 * 6: PerfMonV2 gate on the legacy alias: with PerfCntrGlobalCtl
	 * bit 0 clear an armed counter neither counts nor interrupts; setting
	 * the bit lets it wrap, with one PMI
	 */
	if (amd_v2) {
		u64 c;

		APIC[LVTPC] = 0x400;
		n_nmi = n_fixed = 0;
		wrmsr(0xc0000301, 0);
		arm(100, 1);
		spin(1000);
		c = rdmsr(ctr0);
		result(n_nmi == 0 && c == (1ULL << 48) - 100,
		       "PerfCntrGlobalCtl bit 0 clear: no count, no PMI");
		wrmsr(0xc0000301, 1);
		spin(1000);
		wrmsr(0xc0000301, 0);
		disarm();
		result(n_nmi == 1 && n_fixed == 0 && (rdmsr(0xc0000300) & 1),
		       "PerfCntrGlobalCtl bit 0 set: the counter wraps, one PMI");
		wrmsr(0xc0000302, 0x3f);
		wrmsr(0xc0000301, 0x3f);
	}

	puts("1..");
	putu(testno);
	puts("\n");
	outl(0xf4, fails ? 1 : 0);      /* QEMU exit status 1 (pass) or 3 (fail) */
	for (;;)
		asm volatile("cli; hlt");
}

asm(".section .text.mb,\"ax\"\n"
    ".globl _start\n"
    "_start: mov $0x200000, %esp; call main; 1: hlt; jmp 1b\n");
