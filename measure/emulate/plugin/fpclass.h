/*
 * fpclass: the floating-point work of one x86-64 instruction, decoded from
 * its bytes. Counts follow the FP_ARITH_INST_RETIRED convention: one per
 * lane for add, sub, mul, div, sqrt, min, max, horizontal add/sub and
 * addsub; two per lane for FMA and dot products. Comparisons, conversions,
 * rounding, logic, moves and the reciprocal estimates (rcp, rsqrt) do no
 * counted work. x87 arithmetic counts one per instruction in extended
 * precision.
 *
 * Decoding bytes rather than parsing disassembly text is exact by
 * construction (the prefixes and the VEX fields say precision and width)
 * and costs a few branches per instruction at translation time.
 */
#ifndef RPROF_FPCLASS_H
#define RPROF_FPCLASS_H

#include <stddef.h>
#include <stdint.h>

enum rp_prec { RP_FP64, RP_FP32, RP_FP16, RP_BF16, RP_FP80, RP_NPREC };
enum rp_width { RP_SCALAR, RP_V128, RP_V256, RP_X87, RP_NWIDTH };

struct rp_fp {
	uint8_t flops; /* 0: no counted work */
	uint8_t prec;  /* enum rp_prec */
	uint8_t width; /* enum rp_width */
	uint8_t nt;    /* a non-temporal store */
};

/* lanes by precision (double, single) and vector length (0: 128, 1: 256) */
static inline int rp_lanes(int dbl, int l256) { return (dbl ? 2 : 4) << l256; }

static inline int rp_legacy_arith(uint8_t op)
{
	switch (op) {
	case 0x51: /* sqrt */
	case 0x58: /* add */
	case 0x59: /* mul */
	case 0x5c: /* sub */
	case 0x5d: /* min */
	case 0x5e: /* div */
	case 0x5f: /* max */
		return 1;
	}
	return 0;
}

/* rp_is_fma reports whether a VEX 0F38 opcode with pp=66 is an FMA3 form;
 * *scalar is set for the ss/sd forms. */
static inline int rp_is_fma(uint8_t op, int *scalar)
{
	uint8_t hi = op & 0xf0, lo = op & 0x0f;
	if ((hi != 0x90 && hi != 0xa0 && hi != 0xb0) || lo < 6)
		return 0;
	*scalar = (lo & 1) && lo >= 9; /* x9, xB, xD, xF */
	return 1;
}

/* rp_whole says whether the n bytes hold all of the instruction whose
 * opcode is at b[op]: its ModRM byte, SIB, displacement and imm bytes
 * (64-bit addressing). QEMU's x86 translator ends a block before an
 * instruction, not the block's first, that crosses into the next page,
 * yet QEMU 7.2 still lists it in that block with the bytes read up to
 * the page's end; the next block starts with it whole. */
static inline int rp_whole(const uint8_t *b, size_t n, size_t op, size_t imm)
{
	size_t need = op + 2; /* the opcode and ModRM */
	uint8_t m;
	int mod, rm;

	if (n < need)
		return 0;
	m = b[op + 1];
	mod = m >> 6;
	rm = m & 7;
	if (mod != 3) {
		if (rm == 4) { /* SIB */
			if (n < need + 1)
				return 0;
			if (mod == 0 && (b[need] & 7) == 5)
				need += 4;
			need++;
		} else if (mod == 0 && rm == 5) { /* RIP-relative */
			need += 4;
		}
		need += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	return n >= need + imm;
}

static inline struct rp_fp rp_classify(const uint8_t *b, size_t n)
{
	struct rp_fp r = {0, 0, 0, 0};
	size_t i = 0;
	int p66 = 0, rep = 0, vex = 0, map = 0, pp = 0, w = 0, l = 0;
	uint8_t op;
	size_t opi;

	for (; i < n; i++) {
		uint8_t c = b[i];
		if (c == 0x66)
			p66 = 1;
		else if (c == 0xf2 || c == 0xf3)
			rep = c;
		else if (c == 0x2e || c == 0x36 || c == 0x3e || c == 0x26 || c == 0x64 ||
		         c == 0x65 || c == 0x67 || c == 0xf0)
			continue;
		else
			break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40) { /* REX */
		w = (b[i] >> 3) & 1;
		i++;
	}
	if (i >= n)
		return r;
	if (b[i] == 0xc5 && i + 2 < n) {
		vex = 1;
		map = 1;
		l = (b[i + 1] >> 2) & 1;
		pp = b[i + 1] & 3;
		op = b[i + 2];
		opi = i + 2;
	} else if (b[i] == 0xc4 && i + 3 < n) {
		vex = 1;
		map = b[i + 1] & 0x1f;
		w = b[i + 2] >> 7;
		l = (b[i + 2] >> 2) & 1;
		pp = b[i + 2] & 3;
		op = b[i + 3];
		opi = i + 3;
	} else if (b[i] == 0x0f && i + 1 < n) {
		if (b[i + 1] == 0x38 || b[i + 1] == 0x3a) {
			if (i + 2 >= n)
				return r;
			map = b[i + 1] == 0x38 ? 2 : 3;
			op = b[i + 2];
			opi = i + 2;
		} else {
			map = 1;
			op = b[i + 1];
			opi = i + 1;
		}
		pp = rep == 0xf3 ? 2 : rep == 0xf2 ? 3 : p66 ? 1 : 0;
	} else if (b[i] >= 0xd8 && b[i] <= 0xdf && i + 1 < n) {
		uint8_t esc = b[i], m = b[i + 1];
		int reg = (m >> 3) & 7, mem = (m >> 6) != 3, arith = reg <= 1 || reg >= 4;
		int counted = 0;
		switch (esc) {
		case 0xd8: /* fadd fmul fsub(r) fdiv(r): m32fp or st(i) */
		case 0xdc: /* the same with m64fp or st(i) as destination */
			counted = arith;
			break;
		case 0xda: /* fiadd... m32int; register forms are fcmov, fucompp */
		case 0xde: /* fiadd... m16int; register forms are the popping ones */
			counted = mem ? arith : (esc == 0xde && arith);
			break;
		case 0xd9: /* fsqrt */
			counted = m == 0xfa;
			break;
		}
		if (counted && rp_whole(b, n, i, 0)) {
			r.flops = 1;
			r.prec = RP_FP80;
			r.width = RP_X87;
		}
		return r;
	} else {
		/* movnti m32/m64, r: 0F C3 is caught above; nothing else here */
		return r;
	}

	if (map == 1) {
		if (rp_legacy_arith(op) && rp_whole(b, n, opi, 0)) {
			int scalar = pp >= 2, dbl = pp == 1 || pp == 3;
			r.flops = scalar ? 1 : rp_lanes(dbl, l);
			r.prec = dbl ? RP_FP64 : RP_FP32;
			r.width = scalar ? RP_SCALAR : l ? RP_V256 : RP_V128;
			return r;
		}
		if ((op == 0x7c || op == 0x7d || op == 0xd0) && (pp == 1 || pp == 3) && rp_whole(b, n, opi, 0)) {
			int dbl = pp == 1; /* haddpd/hsubpd/addsubpd vs the ps forms */
			r.flops = rp_lanes(dbl, l);
			r.prec = dbl ? RP_FP64 : RP_FP32;
			r.width = l ? RP_V256 : RP_V128;
			return r;
		}
		/* non-temporal stores: movntps/pd (2B), movntdq (66 E7),
		 * movnti (C3, legacy only), maskmovdqu (66 F7) */
		if (op == 0x2b && pp <= 1)
			r.nt = 1;
		else if ((op == 0xe7 || op == 0xf7) && pp == 1)
			r.nt = 1;
		else if (op == 0xc3 && !vex && pp == 0)
			r.nt = 1;
		(void)w;
		return r;
	}
	if (map == 2 && vex && pp == 1) {
		int scalar;
		if (rp_is_fma(op, &scalar) && rp_whole(b, n, opi, 0)) {
			r.flops = 2 * (scalar ? 1 : rp_lanes(w, l));
			r.prec = w ? RP_FP64 : RP_FP32;
			r.width = scalar ? RP_SCALAR : l ? RP_V256 : RP_V128;
		}
		return r;
	}
	if (map == 3 && pp == 1 && (op == 0x40 || op == 0x41) && rp_whole(b, n, opi, 1)) {
		int dbl = op == 0x41; /* dppd (128-bit only) vs dpps */
		r.flops = 2 * rp_lanes(dbl, l);
		r.prec = dbl ? RP_FP64 : RP_FP32;
		r.width = l ? RP_V256 : RP_V128;
		return r;
	}
	return r;
}

#endif
