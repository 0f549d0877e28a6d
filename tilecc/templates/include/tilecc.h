// tilecc device library: the types and helpers that generated kernels call.
//
// Compiles under NVRTC (CUDA) and hiprtc (HIP) with no SDK headers, and under nvcc and
// hipcc (-std=c++17) as an ordinary include: 16-bit floats are our own storage types with
// conversions through PTX `cvt` (CUDA) or _Float16 (HIP); everything else is plain C++17.  The target differences live here, in a few
// preprocessor branches, so that generated kernels are the same text for both.
#pragma once

#if defined(__HIP__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define TC_HIP 1
#endif

// hiprtc and nvcc bring the runtime's device declarations themselves (NVRTC needs none);
// hipcc compiles plain C++ unless the source includes them.
#if defined(TC_HIP) && !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif

#define TC_DEVICE __device__ __forceinline__

#ifndef TC_HIP
// libdevice functions with no CUDA math API name (libdevice.pow of an int exponent,
// libdevice.rcp64h): NVRTC links libdevice, which defines them
extern "C" __device__ float __nv_powif(float, int);
extern "C" __device__ double __nv_powi(double, int);
extern "C" __device__ double __nv_rcp64h(double);
#endif

namespace tc {

template <typename A, typename B> struct is_same { static constexpr bool value = false; };
template <typename A> struct is_same<A, A> { static constexpr bool value = true; };

// ---- 16-bit floating point: storage types; arithmetic rounds through float ---------------

TC_DEVICE unsigned short float_to_half_bits(float f) {
#ifdef TC_HIP
  return __builtin_bit_cast(unsigned short, static_cast<_Float16>(f));
#else
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
}

TC_DEVICE float half_bits_to_float(unsigned short h) {
#ifdef TC_HIP
  return static_cast<float>(__builtin_bit_cast(_Float16, h));
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#endif
}

TC_DEVICE unsigned short float_to_bfloat16_bits(float f) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<unsigned short>(u >> 16);
#endif
}

TC_DEVICE float bfloat16_bits_to_float(unsigned short h) {
  return __uint_as_float(static_cast<unsigned int>(h) << 16);
}

struct half {
  unsigned short bits;
  half() = default;
  // a constant from its bit pattern: no conversion at run time
  static constexpr TC_DEVICE half from_bits(unsigned short b) { half h{}; h.bits = b; return h; }
  TC_DEVICE explicit half(float f) : bits(float_to_half_bits(f)) {}
  TC_DEVICE explicit operator float() const { return half_bits_to_float(bits); }
};

struct bfloat16 {
  unsigned short bits;
  bfloat16() = default;
  static constexpr TC_DEVICE bfloat16 from_bits(unsigned short b) {
    bfloat16 h{};
    h.bits = b;
    return h;
  }
  TC_DEVICE explicit bfloat16(float f) : bits(float_to_bfloat16_bits(f)) {}
  TC_DEVICE explicit operator float() const { return bfloat16_bits_to_float(bits); }
};

#define TC_HALF_OPERATORS(H)                                                                  \
  TC_DEVICE H operator+(H a, H b) { return H(float(a) + float(b)); }                          \
  TC_DEVICE H operator-(H a, H b) { return H(float(a) - float(b)); }                          \
  TC_DEVICE H operator*(H a, H b) { return H(float(a) * float(b)); }                          \
  TC_DEVICE H operator/(H a, H b) { return H(float(a) / float(b)); }                          \
  TC_DEVICE H operator-(H a) { H r = a; r.bits ^= 0x8000u; return r; }                         \
  TC_DEVICE bool operator<(H a, H b) { return float(a) < float(b); }                          \
  TC_DEVICE bool operator<=(H a, H b) { return float(a) <= float(b); }                        \
  TC_DEVICE bool operator>(H a, H b) { return float(a) > float(b); }                          \
  TC_DEVICE bool operator>=(H a, H b) { return float(a) >= float(b); }                        \
  TC_DEVICE bool operator==(H a, H b) { return float(a) == float(b); }                        \
  TC_DEVICE bool operator!=(H a, H b) { return float(a) != float(b); }
TC_HALF_OPERATORS(half)
TC_HALF_OPERATORS(bfloat16)
#undef TC_HALF_OPERATORS

template <typename T> struct is_half_like {
  static constexpr bool value = is_same<T, half>::value || is_same<T, bfloat16>::value;
};

// ---- 8-bit floating point (Triton's fp8 types): storage types, converted through float ---
//
// A format: EXP exponent bits, MAN mantissa bits, exponent BIAS, and where its special values
// lie (SPECIALS): kIeee (e5m2: infinities and NaNs at the largest exponent), kFn (e4m3fn:
// no infinities, S.1111.111 is NaN), kFnuz (no infinities, no -0: 0x80 is the only NaN).
// float → fp8 rounds to nearest even and saturates (finite overflow and infinities give the
// largest finite value of their sign; NaN stays NaN), as Triton's cvt.rn.satfinite.
enum Fp8Specials { kIeee, kFn, kFnuz };

template <int EXP, int MAN, int BIAS, int SPECIALS>
struct fp8 {
  static constexpr unsigned kTop = (1u << (EXP + MAN)) - 1;  // all bits but the sign
  static constexpr unsigned kMaxCode =
      SPECIALS == kIeee ? kTop - (1u << MAN) : (SPECIALS == kFn ? kTop - 1 : kTop);
  static constexpr unsigned kNan = SPECIALS == kFnuz ? 0x80u : kTop;

  unsigned char bits;
  fp8() = default;
  static constexpr TC_DEVICE fp8 from_bits(unsigned char b) { fp8 h{}; h.bits = b; return h; }
  TC_DEVICE explicit fp8(float f) : bits(encode(f)) {}
  TC_DEVICE explicit operator float() const { return decode(bits); }

  // the OCP formats (e4m3fn, e5m2) have conversion instructions from sm_89 on
  static constexpr bool kOcpE4M3 = EXP == 4 && MAN == 3 && BIAS == 7 && SPECIALS == kFn;
  static constexpr bool kOcpE5M2 = EXP == 5 && MAN == 2 && BIAS == 15 && SPECIALS == kIeee;

  static TC_DEVICE unsigned char encode(float f) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (kOcpE4M3 || kOcpE5M2) {  // the second source goes to the low byte
      unsigned short pair;
      if constexpr (kOcpE4M3) {
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
      } else {
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
      }
      return static_cast<unsigned char>(pair & 0xffu);
    }
#endif
    const unsigned u = __float_as_uint(f);
    const unsigned sign = (u >> 24) & 0x80u;
    const unsigned a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<unsigned char>(kNan);
    unsigned code;
    if ((a >> 23) >= static_cast<unsigned>(128 - BIAS)) {  // a normal number of the format
      const int shift = 23 - MAN;  // drop the low mantissa bits, rounding to nearest even
      const unsigned rounded = (a + ((1u << (shift - 1)) - 1) + ((a >> shift) & 1u)) >> shift;
      code = rounded - (static_cast<unsigned>(127 - BIAS) << MAN);
      if (code > kMaxCode) code = kMaxCode;  // saturate (infinities too)
    } else {  // a subnormal of the format: a multiple of its smallest step, 2^(1 - BIAS - MAN)
      code = static_cast<unsigned>(::rintf(__uint_as_float(a) *
                                          __uint_as_float((BIAS + MAN - 1 + 127) << 23)));
    }
    if (SPECIALS == kFnuz && code == 0) return 0;  // no negative zero: 0x80 is NaN
    return static_cast<unsigned char>(sign | code);
  }

  static TC_DEVICE float decode(unsigned char b) {
    if constexpr (kOcpE5M2) {  // e5m2 is the high byte of an fp16
      return half_bits_to_float(static_cast<unsigned short>(b << 8));
    }
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if constexpr (kOcpE4M3) {
      unsigned pair;
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(pair) : "h"(static_cast<unsigned short>(b)));
      return half_bits_to_float(static_cast<unsigned short>(pair & 0xffffu));
    }
#endif
    const unsigned code = b & kTop;
    const unsigned exponent = code >> MAN, mantissa = code & ((1u << MAN) - 1);
    float magnitude;
    if (SPECIALS == kFnuz ? b == 0x80u : (SPECIALS == kFn ? code == kTop
                                          : exponent == (kTop >> MAN) && mantissa != 0)) {
      return __uint_as_float(0x7fc00000u);  // NaN
    } else if (SPECIALS == kIeee && exponent == (kTop >> MAN)) {
      magnitude = __uint_as_float(0x7f800000u);  // infinity
    } else if (exponent == 0) {  // subnormal: steps of 2^(1 - BIAS - MAN)
      magnitude = static_cast<float>(mantissa) * __uint_as_float((128 - BIAS - MAN) << 23);
    } else {
      magnitude = __uint_as_float((code + (static_cast<unsigned>(127 - BIAS) << MAN)) << (23 - MAN));
    }
    return (b & 0x80u) ? -magnitude : magnitude;
  }
};

using fp8e4nv = fp8<4, 3, 7, kFn>;      // float8_e4m3fn (OCP E4M3)
using fp8e5 = fp8<5, 2, 15, kIeee>;     // float8_e5m2 (OCP E5M2)
using fp8e4b8 = fp8<4, 3, 8, kFnuz>;    // float8_e4m3fnuz (AMD CDNA3)
using fp8e5b16 = fp8<5, 2, 16, kFnuz>;  // float8_e5m2fnuz (AMD CDNA3)

template <typename T> struct is_fp8 { static constexpr bool value = false; };
template <int E, int M, int B, int S> struct is_fp8<fp8<E, M, B, S>> {
  static constexpr bool value = true;
};

// comparisons (exact through float); fp8 has no arithmetic: kernels convert first
template <int E, int M, int B, int S>
TC_DEVICE bool operator<(fp8<E, M, B, S> a, fp8<E, M, B, S> b) { return float(a) < float(b); }
template <int E, int M, int B, int S>
TC_DEVICE bool operator<=(fp8<E, M, B, S> a, fp8<E, M, B, S> b) { return float(a) <= float(b); }
template <int E, int M, int B, int S>
TC_DEVICE bool operator>(fp8<E, M, B, S> a, fp8<E, M, B, S> b) { return float(a) > float(b); }
template <int E, int M, int B, int S>
TC_DEVICE bool operator>=(fp8<E, M, B, S> a, fp8<E, M, B, S> b) { return float(a) >= float(b); }
template <int E, int M, int B, int S>
TC_DEVICE bool operator==(fp8<E, M, B, S> a, fp8<E, M, B, S> b) { return float(a) == float(b); }
template <int E, int M, int B, int S>
TC_DEVICE bool operator!=(fp8<E, M, B, S> a, fp8<E, M, B, S> b) { return float(a) != float(b); }

// ---- conversions -----------------------------------------------------------------------

template <typename T> struct int_range;  // the integer types' limits, without <limits>
#define TC_INT_RANGE(T, LO, HI) \
  template <> struct int_range<T> { static constexpr T lo = LO, hi = HI; };
TC_INT_RANGE(signed char, -128, 127)
TC_INT_RANGE(short, -32768, 32767)
TC_INT_RANGE(int, -2147483647 - 1, 2147483647)
TC_INT_RANGE(long long, -9223372036854775807ll - 1, 9223372036854775807ll)
TC_INT_RANGE(unsigned char, 0, 255)
TC_INT_RANGE(unsigned short, 0, 65535)
TC_INT_RANGE(unsigned int, 0u, 4294967295u)
TC_INT_RANGE(unsigned long long, 0ull, 18446744073709551615ull)
#undef TC_INT_RANGE

template <typename T> struct is_float {
  static constexpr bool value = is_same<T, float>::value || is_same<T, double>::value;
};

// Float → integer: truncate, saturate to the target's range, NaN → 0 — what the
// hardware conversions do, made explicit because C leaves out-of-range values undefined.
// (`nan`: NVIDIA's libdevice conversions from double and to 64 bits give the sign bit.)
// Without branches: the conversion always runs, on a value inside the range, and selects
// pick the saturated ends and NaN's value (an `if` per case became a branch per element,
// which took a row quantization to 388 instructions a thread against Triton's 214).
template <typename To, typename From>
TC_DEVICE To float_to_int(From x, To nan = To(0)) {
  const From lo = static_cast<From>(int_range<To>::lo);
  const From hi = static_cast<From>(int_range<To>::hi);
#if !defined(TC_HIP) && defined(__CUDA_ARCH__)
  // fp32 to 32 bits or fewer: the hardware conversion (cvt.rzi, saturating, NaN → 0), then
  // the narrower range
  if constexpr (is_same<From, float>::value && sizeof(To) <= 4) {
    if constexpr (int_range<To>::lo < 0) {
      const int y = __float2int_rz(x);
      return static_cast<To>(::min(::max(y, static_cast<int>(int_range<To>::lo)),
                                   static_cast<int>(int_range<To>::hi)));
    } else {
      const unsigned y = __float2uint_rz(x);
      return static_cast<To>(::min(y, static_cast<unsigned>(int_range<To>::hi)));
    }
  }
#endif
  if constexpr (2 * sizeof(To) <= sizeof(From)) {  // both ends exact in From: clamp there
    const From clamped = x > lo ? (x < hi ? x : hi) : lo;  // (NaN compares false: lo)
    return x == x ? static_cast<To>(clamped) : nan;
  } else {  // (the top end rounds up in From: past the range)
    const From inside = x > lo && x < hi ? x : From(0);
    To y = static_cast<To>(inside);
    y = x <= lo ? int_range<To>::lo : y;
    y = x >= hi ? int_range<To>::hi : y;
    return x == x ? y : nan;
  }
}

// An integer of up to 32 bits to fp16 in one rounding (cvt.rn.f16.s32 / .u32): the same
// value as through fp32 (exact up to 2^24, and beyond fp16's range either way), in one
// instruction instead of a conversion and a pack.
template <typename From> TC_DEVICE half int_to_half(From x) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
  half r;
  if constexpr (is_same<From, unsigned int>::value)
    asm("cvt.rn.f16.u32 %0, %1;" : "=h"(r.bits) : "r"(x));
  else
    asm("cvt.rn.f16.s32 %0, %1;" : "=h"(r.bits) : "r"(static_cast<int>(x)));
  return r;
#else
  return half(static_cast<float>(x));
#endif
}

// Value conversion with Triton's semantics: to bool is `!= 0`, floats to integers
// truncate (and saturate), 16-bit floats convert through float.
template <typename To, typename From>
TC_DEVICE To cast(From x) {
  if constexpr (is_same<To, From>::value) {
    return x;
  } else if constexpr (is_half_like<From>::value || is_fp8<From>::value) {
    return cast<To>(static_cast<float>(x));
  } else if constexpr (is_same<To, bool>::value) {
    return x != From(0);
  } else if constexpr (is_same<To, half>::value && !is_float<From>::value && sizeof(From) <= 4) {
    return int_to_half(x);
  } else if constexpr (is_half_like<To>::value || is_fp8<To>::value) {
    return To(static_cast<float>(x));
  } else if constexpr (is_float<From>::value && !is_float<To>::value) {
    return float_to_int<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

// Two 16-bit floats in one 32-bit register, the first in the low half: a pair of a
// tensor-core register fragment.
template <typename T>
TC_DEVICE unsigned pack2(T lo, T hi) {
  return static_cast<unsigned>(lo.bits) | (static_cast<unsigned>(hi.bits) << 16);
}

// The two 16-bit floats of a 32-bit register, as pack2 holds them (and the paired
// instructions below leave them).
template <typename T>
TC_DEVICE void unpack2(unsigned word, T& lo, T& hi) {
  lo = T::from_bits(static_cast<unsigned short>(word & 0xffffu));
  hi = T::from_bits(static_cast<unsigned short>(word >> 16));
}

// Two fp32 values to fp16 or bf16 in one instruction (cvt.rn.{f16,bf16}x2.f32), the form
// the tensor-core accumulators are converted in: converted one by one, ptxas serializes
// warpgroup MMAs kept in flight across loop iterations (info C7514).
template <typename To>
TC_DEVICE void cast_pair(float a, float b, To& x, To& y) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(is_half_like<To>::value, "cast_pair converts to fp16 or bf16");
  unsigned packed;
  if constexpr (is_same<To, half>::value) {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(b), "f"(a));
  } else {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(b), "f"(a));
  }
  unpack2(packed, x, y);
#else
  x = cast<To>(a);
  y = cast<To>(b);
#endif
}

// Two fp16 / bf16 products in one instruction (sm_80 and later): the exact product of two
// 16-bit floats fits a float, so the pair's one rounding (fma with -0 for bf16, which has
// no mul.rn.bf16x2 before sm_90) gives what converting the float product one element at a
// time gives — in a quarter of the instructions.
template <typename T>
TC_DEVICE void mul_pair(T a0, T a1, T b0, T b1, T& x, T& y) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(is_half_like<T>::value, "mul_pair multiplies fp16 or bf16");
  unsigned product;
  if constexpr (is_same<T, half>::value) {
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(product) : "r"(pack2(a0, a1)), "r"(pack2(b0, b1)));
  } else {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;"
        : "=r"(product) : "r"(pack2(a0, a1)), "r"(pack2(b0, b1)), "r"(0x80008000u));
  }
  unpack2(product, x, y);
#else
  x = a0 * b0;
  y = a1 * b1;
#endif
}

// Two fp16 / bf16 sums or differences in one instruction (sm_80 and later).  A float holds
// at least 2p + 2 bits of a p-bit format's significand (24 >= 2 * 11 + 2), so rounding the
// float sum to 16 bits gives the correctly rounded sum, as the paired instruction does (an
// fma with 1.0 for bf16, which has no add.rn.bf16x2 before sm_90).
template <typename T>
TC_DEVICE void add_pair(T a0, T a1, T b0, T b1, T& x, T& y) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(is_half_like<T>::value, "add_pair adds fp16 or bf16");
  unsigned sum;
  if constexpr (is_same<T, half>::value) {
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(sum) : "r"(pack2(a0, a1)), "r"(pack2(b0, b1)));
  } else {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;"
        : "=r"(sum) : "r"(pack2(a0, a1)), "r"(0x3f803f80u), "r"(pack2(b0, b1)));
  }
  unpack2(sum, x, y);
#else
  x = a0 + b0;
  y = a1 + b1;
#endif
}

template <typename T>
TC_DEVICE void sub_pair(T a0, T a1, T b0, T b1, T& x, T& y) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(is_half_like<T>::value, "sub_pair subtracts fp16 or bf16");
  unsigned difference;
  if constexpr (is_same<T, half>::value) {
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(difference) : "r"(pack2(a0, a1)), "r"(pack2(b0, b1)));
  } else {  // a - b = fma(b, -1, a)
    asm("fma.rn.bf16x2 %0, %1, %2, %3;"
        : "=r"(difference) : "r"(pack2(b0, b1)), "r"(0xbf80bf80u), "r"(pack2(a0, a1)));
  }
  unpack2(difference, x, y);
#else
  x = a0 - b0;
  y = a1 - b1;
#endif
}

template <typename To, typename From>
TC_DEVICE To bitcast(From x) {
  static_assert(sizeof(To) == sizeof(From), "bitcast needs equal sizes");
  union { From from; To to; } u;  // type punning through a union: NVRTC has no memcpy builtin
  u.from = x;
  return u.to;
}

// A narrowing float conversion rounded toward zero (Triton's fp_downcast_rounding="rtz"):
// the nearest value, one step of the bits toward zero where it is larger in magnitude
// than x (the formats are sign-magnitude; an overflow to inf becomes the largest finite).
template <typename To, typename From>
TC_DEVICE To cast_rz(From x) {
  To y = cast<To>(x);
  const From back = cast<From>(y);
  if (x == x && (back < From(0) ? -back : back) > (x < From(0) ? -x : x)) {
    if constexpr (is_half_like<To>::value)
      y = To::from_bits(static_cast<unsigned short>(y.bits - 1));
    else
      y = bitcast<To>(bitcast<unsigned>(y) - 1u);
  }
  return y;
}

template <typename T> TC_DEVICE T inf();
template <> TC_DEVICE float inf<float>() { return __int_as_float(0x7f800000); }
template <> TC_DEVICE double inf<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <typename T> TC_DEVICE T nan();
template <> TC_DEVICE float nan<float>() { return __int_as_float(0x7fc00000); }
template <> TC_DEVICE double nan<double>() { return __longlong_as_double(0x7ff8000000000000ll); }

// ---- math: one name per function, overloaded on the element type ------------------------

// float32 exp / exp2 / log / log2 / sqrt / rsqrt and division as Triton computes them on
// NVIDIA: the hardware's approximate units (ex2.approx, lg2.approx: ~2 ulp; sqrt.approx,
// rsqrt.approx, flushing subnormals as Triton does) and div.full.f32 (2 ulp), rather than
// libm's longer exact-rounding sequences (tl.sqrt_rn is the correctly rounded root).
#ifdef TC_HIP
TC_DEVICE float exp_f32(float x) { return ::__expf(x); }
TC_DEVICE float exp2_f32(float x) { return ::exp2f(x); }
TC_DEVICE float log_f32(float x) { return ::__logf(x); }
TC_DEVICE float log2_f32(float x) { return ::log2f(x); }
TC_DEVICE float fdiv(float a, float b) { return a / b; }
TC_DEVICE float sqrt_f32(float x) { return ::sqrtf(x); }
TC_DEVICE float rsqrt_f32(float x) { return ::rsqrtf(x); }
#else
TC_DEVICE float exp2_f32(float x) {  // flushing subnormal results to zero, as Triton does
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
TC_DEVICE float exp_f32(float x) { return exp2_f32(x * 1.4426950408889634f); }
TC_DEVICE float log2_f32(float x) {
  float y;
  asm("lg2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
TC_DEVICE float log_f32(float x) { return log2_f32(x) * 0.6931471805599453f; }
TC_DEVICE float fdiv(float a, float b) {
  float y;
  asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}
TC_DEVICE float sqrt_f32(float x) {
  float y;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
TC_DEVICE float rsqrt_f32(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#endif

#define TC_UNARY_MATH(NAME, F32, F64)                                                         \
  TC_DEVICE float NAME(float x) { return F32(x); }                                            \
  TC_DEVICE double NAME(double x) { return F64(x); }                                          \
  TC_DEVICE half NAME(half x) { return half(F32(static_cast<float>(x))); }                    \
  TC_DEVICE bfloat16 NAME(bfloat16 x) { return bfloat16(F32(static_cast<float>(x))); }
TC_UNARY_MATH(exp, exp_f32, ::exp)
TC_UNARY_MATH(exp2, exp2_f32, ::exp2)
TC_UNARY_MATH(log, log_f32, ::log)
TC_UNARY_MATH(log2, log2_f32, ::log2)
TC_UNARY_MATH(sqrt, sqrt_f32, ::sqrt)
TC_UNARY_MATH(sqrt_rn, ::sqrtf, ::sqrt)
TC_UNARY_MATH(rsqrt, rsqrt_f32, ::rsqrt)
TC_UNARY_MATH(sin, ::sinf, ::sin)
TC_UNARY_MATH(cos, ::cosf, ::cos)
TC_UNARY_MATH(floor, ::floorf, ::floor)
TC_UNARY_MATH(ceil, ::ceilf, ::ceil)
TC_UNARY_MATH(erf, ::erff, ::erf)
TC_UNARY_MATH(fabs, ::fabsf, ::fabs)
#undef TC_UNARY_MATH

#define TC_BINARY_MATH(NAME, F32, F64)                                                        \
  TC_DEVICE float NAME(float a, float b) { return F32(a, b); }                                \
  TC_DEVICE double NAME(double a, double b) { return F64(a, b); }                             \
  TC_DEVICE half NAME(half a, half b) {                                                       \
    return half(F32(static_cast<float>(a), static_cast<float>(b)));                           \
  }                                                                                           \
  TC_DEVICE bfloat16 NAME(bfloat16 a, bfloat16 b) {                                           \
    return bfloat16(F32(static_cast<float>(a), static_cast<float>(b)));                       \
  }
TC_BINARY_MATH(fmin, ::fminf, ::fmin)
TC_BINARY_MATH(fmax, ::fmaxf, ::fmax)
TC_BINARY_MATH(fmod, ::fmodf, ::fmod)
#undef TC_BINARY_MATH

// tl.minimum / tl.maximum / tl.clamp with propagate_nan=tl.PropagateNan.ALL: NaN wins
template <typename T> TC_DEVICE T fmin_nan(T a, T b) {
  return (a != a || b != b) ? a + b : fmin(a, b);
}
template <typename T> TC_DEVICE T fmax_nan(T a, T b) {
  return (a != a || b != b) ? a + b : fmax(a, b);
}

// libdevice functions that the CUDA math API does not name, or HIP computes differently
#ifdef TC_HIP
TC_DEVICE float powi(float x, int n) { return __ocml_pown_f32(x, n); }
TC_DEVICE double powi(double x, int n) { return __ocml_pown_f64(x, n); }
// HIP's __frcp_rn / __drcp_rn are the approximate v_rcp: the correctly rounded division
TC_DEVICE float rcp_rn(float x) { return 1.0f / x; }
TC_DEVICE double rcp_rn(double x) { return 1.0 / x; }
// CUDA's __hadd / __rhadd / __sad (and unsigned forms): HIP's overflow or return a flag
TC_DEVICE int hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
TC_DEVICE unsigned hadd(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1);
}
TC_DEVICE int rhadd(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1);
}
TC_DEVICE unsigned rhadd(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
TC_DEVICE unsigned sad(int x, int y, unsigned z) {
  return (x > y ? static_cast<unsigned>(x) - static_cast<unsigned>(y)
                : static_cast<unsigned>(y) - static_cast<unsigned>(x)) + z;
}
TC_DEVICE unsigned sad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }
TC_DEVICE float saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }  // NaN → 0
#endif

TC_DEVICE float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
TC_DEVICE double fma(double a, double b, double c) { return ::fma(a, b, c); }
// 16-bit fma rounded once, in the 16-bit type (fma.rn.f16 / .bf16, as Triton's): through
// fp32, the fp32 sum is rounded before the 16-bit result (twice), and it costs three
// conversions and a pack besides (dequantizing low-bit weights: w * scale + zero).
TC_DEVICE half fma(half a, half b, half c) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
  half r;
  asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits), "h"(c.bits));
  return r;
#else
  return half(::fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
#endif
}
TC_DEVICE bfloat16 fma(bfloat16 a, bfloat16 b, bfloat16 c) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  bfloat16 r;
  asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(r.bits) : "h"(a.bits), "h"(b.bits), "h"(c.bits));
  return r;
#else
  return bfloat16(::fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
#endif
}

// Two fp16 / bf16 fused multiply-adds in one instruction (sm_80 and later): each half
// rounded once, as the one-element fma.rn below is, so the results are the same bits.
template <typename T>
TC_DEVICE void fma_pair(T a0, T a1, T b0, T b1, T c0, T c1, T& x, T& y) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(is_half_like<T>::value, "fma_pair adds fp16 or bf16 products");
  unsigned sum;
  if constexpr (is_same<T, half>::value) {
    asm("fma.rn.f16x2 %0, %1, %2, %3;"
        : "=r"(sum) : "r"(pack2(a0, a1)), "r"(pack2(b0, b1)), "r"(pack2(c0, c1)));
  } else {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;"
        : "=r"(sum) : "r"(pack2(a0, a1)), "r"(pack2(b0, b1)), "r"(pack2(c0, c1)));
  }
  unpack2(sum, x, y);
#else
  x = fma(a0, b0, c0);
  y = fma(a1, b1, c1);
#endif
}

// tl.umulhi: the high half of the double-width product, the bits read as unsigned
// (__umulhi / __umul64hi exist under these names on CUDA and HIP alike).
TC_DEVICE unsigned umulhi(unsigned a, unsigned b) { return __umulhi(a, b); }
TC_DEVICE int umulhi(int a, int b) {
  return static_cast<int>(__umulhi(static_cast<unsigned>(a), static_cast<unsigned>(b)));
}
TC_DEVICE unsigned long long umulhi(unsigned long long a, unsigned long long b) {
  return __umul64hi(a, b);
}
TC_DEVICE long long umulhi(long long a, long long b) {
  return static_cast<long long>(__umul64hi(static_cast<unsigned long long>(a),
                                           static_cast<unsigned long long>(b)));
}

template <typename T> TC_DEVICE T abs(T x) { return x < T(0) ? T(-x) : x; }
// Signed integers of 32 bits or fewer (the C promotions make the narrower ones 32-bit) take
// their minimum and maximum by a compare and a bit select on CUDA: ptxas 13.0 for sm_90 merges
// two max (or min) into its three-input VIMNMX3 and folds a negation of an operand into it
// without the sign, so max(max(-a, -b), -c) -- tl.max(-x) over a few rows -- came out wrong.
// The select is an instruction or two more; ptxas does not rebuild a VIMNMX from it.
template <typename T> struct is_narrow_signed_int { static constexpr bool value = false; };
template <> struct is_narrow_signed_int<signed char> { static constexpr bool value = true; };
template <> struct is_narrow_signed_int<short> { static constexpr bool value = true; };
template <> struct is_narrow_signed_int<int> { static constexpr bool value = true; };

// `second ? b : a`, as a bit select for the signed integers above on CUDA
template <typename T> TC_DEVICE T pick(bool second, T a, T b) {
#ifndef TC_HIP
  if constexpr (is_narrow_signed_int<T>::value) {
    const int x = a, y = b;
    return static_cast<T>(x ^ ((x ^ y) & -static_cast<int>(second)));
  }
#endif
  return second ? b : a;
}
template <typename T> TC_DEVICE T min(T a, T b) { return pick(b < a, a, b); }
template <typename T> TC_DEVICE T max(T a, T b) { return pick(a < b, a, b); }

// ---- shifts --------------------------------------------------------------------------
// Triton's shifts act on T's bits: the amount reads as unsigned, and an amount of T's
// width or more gives 0 (shl, lshr) or copies of the sign bit (ashr), as PTX's clamped
// shifts do (C leaves such amounts undefined). Arithmetic or logical is the operator's
// choice, not T's: Triton shifts int8 >> uint8 arithmetically, in uint8.
template <int Bytes> struct int_pair;
template <> struct int_pair<1> { using S = signed char; using U = unsigned char; };
template <> struct int_pair<2> { using S = short; using U = unsigned short; };
template <> struct int_pair<4> { using S = int; using U = unsigned int; };
template <> struct int_pair<8> { using S = long long; using U = unsigned long long; };

template <typename T>
TC_DEVICE bool shift_in_range(T n) {
  if constexpr (is_same<T, bool>::value) return !n;  // int1 holds 1 bit
  else return static_cast<typename int_pair<sizeof(T)>::U>(n) < 8 * sizeof(T);
}
template <typename T> TC_DEVICE T shl(T x, T n) {
  using U = typename int_pair<sizeof(T)>::U;
  return shift_in_range(n) ? static_cast<T>(static_cast<U>(static_cast<U>(x) << static_cast<U>(n)))
                           : T(0);
}
template <typename T> TC_DEVICE T lshr(T x, T n) {
  using U = typename int_pair<sizeof(T)>::U;
  return shift_in_range(n) ? static_cast<T>(static_cast<U>(static_cast<U>(x) >> static_cast<U>(n)))
                           : T(0);
}
template <typename T> TC_DEVICE T ashr(T x, T n) {
  if constexpr (is_same<T, bool>::value) {
    return x;  // a 1-bit value is its own sign
  } else {
    using S = typename int_pair<sizeof(T)>::S;
    const int amount = shift_in_range(n) ? static_cast<int>(n) : 8 * sizeof(T) - 1;
    return static_cast<T>(static_cast<S>(static_cast<S>(x) >> amount));
  }
}

// ---- vectors: what one 16-byte (or narrower) memory access moves -----------------------

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
  TC_DEVICE T& operator[](int i) { return v[i]; }
  TC_DEVICE const T& operator[](int i) const { return v[i]; }
};

template <int N, typename T>
TC_DEVICE Vec<T, N> splat(T x) {
  Vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r[i] = x;
  return r;
}

// `p` must be aligned to the vector's size; the planner only asks where it proved that.
// Whole 32-bit words are moved and the elements taken from their bits: NVRTC 13.0 read a
// 16-byte vector of int8 loaded as one aggregate with bytes of neighbouring elements in the
// upper bits of each (a & b of two int8 blocks gave -2048).
template <int N, typename T>
TC_DEVICE Vec<T, N> load(const T* p) {
  if constexpr (sizeof(T) * N % 4 == 0) {
    using Words = Vec<unsigned, sizeof(T) * N / 4>;
    return bitcast<Vec<T, N>>(*reinterpret_cast<const Words*>(p));
  } else {
    return *reinterpret_cast<const Vec<T, N>*>(p);
  }
}

// The 32-bit words a store writes.  fp16 / bf16 pairs are joined with a shift and an or
// (`pack2`), not through a union: the compiler then sees that a pair converted together
// (`cast_pair`, one cvt into one register) is already its word.  Through the union each
// pair cost a byte permute (PRMT), 64 per tile in a 128 x 256 GEMM's epilogue, which ran
// 5% faster at K = 512 without them.
template <typename T, int N>
TC_DEVICE Vec<unsigned, sizeof(T) * N / 4> words_of(const Vec<T, N>& v) {
  using Words = Vec<unsigned, sizeof(T) * N / 4>;
  if constexpr (is_half_like<T>::value) {
    Words w;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) w[i] = pack2(v[2 * i], v[2 * i + 1]);
    return w;
  } else {
    return bitcast<Words>(v);
  }
}

template <int N, typename T>
TC_DEVICE void store(T* p, const Vec<T, N>& v) {
  if constexpr (sizeof(T) * N % 4 == 0) {
    using Words = Vec<unsigned, sizeof(T) * N / 4>;
    *reinterpret_cast<Words*>(p) = words_of(v);
  } else {
    *reinterpret_cast<Vec<T, N>*>(p) = v;
  }
}

// The N elements at global `p` where `pred` holds: one predicated st.global, with the value
// computed whether or not it is stored.  As `if (pred) store(...)`, the compiler would
// place the packing of 16- and 8-bit elements into words under the branch, and a branch
// around several instructions costs a convergence barrier (BSSY / BSYNC) per vector.
template <int N, typename T>
TC_DEVICE void store_if(bool pred, T* p, const Vec<T, N>& v) {
#ifndef TC_HIP
  constexpr int kBytes = sizeof(T) * N;
  if constexpr (kBytes == 16) {
    const auto w = words_of(v);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n"
                 "@p st.global.v4.b32 [%1], {%2, %3, %4, %5};\n}"
                 :: "r"(static_cast<int>(pred)), "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]),
                    "r"(w[3]) : "memory");
    return;
  } else if constexpr (kBytes == 8) {
    const auto w = words_of(v);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n@p st.global.v2.b32 [%1], {%2, %3};\n}"
                 :: "r"(static_cast<int>(pred)), "l"(p), "r"(w[0]), "r"(w[1]) : "memory");
    return;
  } else if constexpr (kBytes == 4) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %0, 0;\n@p st.global.b32 [%1], %2;\n}"
                 :: "r"(static_cast<int>(pred)), "l"(p), "r"(words_of(v)[0]) : "memory");
    return;
  }
#endif
  if (pred) store<N>(p, v);
}

// The N elements at `p` where `pred` holds, else `other`: one predicated access.  The choice
// is made on 32-bit words, as the hardware loads them; chosen element by element, 16- and
// 8-bit elements would each cost a byte permute and the registers to hold both vectors.
template <int N, typename T>
TC_DEVICE Vec<T, N> load_if(bool pred, const T* p, const Vec<T, N>& other) {
  if constexpr (sizeof(T) * N % 4 == 0) {
    using Words = Vec<unsigned, sizeof(T) * N / 4>;
    Words w = bitcast<Words>(other);
    if (pred) w = *reinterpret_cast<const Words*>(p);
    return bitcast<Vec<T, N>>(w);
  } else {
    Vec<T, N> r = other;
    if (pred) r = load<N>(p);
    return r;
  }
}

// *p where `pred` holds, else `other`.  The address is an argument, computed whether the
// element is read or not: index arithmetic that several registers share (a quotient constant
// over a run of them) is then computed once, not again under each element's branch.
template <typename T> struct NoDeduce { using type = T; };
template <typename T>
TC_DEVICE T load1_if(bool pred, const T* p, typename NoDeduce<T>::type other) {
  return pred ? *p : other;
}

// ---- the hardware's counters: tl.extra.cuda.globaltimer / smid, tl.extra.hip.memrealtime --

#ifdef TC_HIP
TC_DEVICE int smid() { return static_cast<int>(__smid()); }  // the compute unit
// hipcc also compiles this header for the host, where the counter's builtin does not exist
TC_DEVICE long long memrealtime() {
#if defined(__HIP_DEVICE_COMPILE__)
  return static_cast<long long>(__builtin_amdgcn_s_memrealtime());
#else
  return 0;
#endif
}
#else
TC_DEVICE long long globaltimer() {  // nanoseconds; read anew at each call
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
TC_DEVICE int smid() {
  unsigned id;
  asm("mov.u32 %0, %%smid;" : "=r"(id));
  return static_cast<int>(id);
}
#endif

// ---- threads, warps and shuffles ------------------------------------------------------------

#ifdef TC_HIP
#define TC_WARP_SIZE 64  // AMD CDNA wavefronts
#else
#define TC_WARP_SIZE 32
#endif

// What the compiler does not know of the launch: the program's thread count, and program
// ids below the grid's limits (2^31 - 1 along x, 65535 along y and z), so non-negative as
// ints.  Index arithmetic over them then divides and takes remainders by shifts and masks,
// with no rounding fix-ups for negative values (the rows and shifts of packed low-bit
// weights: offs_k // 8, offs_k % 8 * 4).  The block's thread count is the launch's.
template <unsigned THREADS> TC_DEVICE void launch_ranges() {
  const unsigned thread = threadIdx.x, x = blockIdx.x, y = blockIdx.y, z = blockIdx.z;
  __builtin_assume(thread < THREADS);
  __builtin_assume(x < 2147483648u);
  __builtin_assume(y < 65536u);
  __builtin_assume(z < 65536u);
}

// Unsigned / and %: a mask and a shift, which the compiler can fold back together, so that
// a layout's warp_id() * 128 + lane_id() * 4 becomes threadIdx.x * 4 (signed division by 32
// costs a rounding fix-up and hides that).
TC_DEVICE int lane_id() { return static_cast<int>(threadIdx.x % TC_WARP_SIZE); }
TC_DEVICE int warp_id() { return static_cast<int>(threadIdx.x / TC_WARP_SIZE); }

// The value held by lane (this lane ^ mask), for any type of 1, 2, 4 or 8 bytes.
template <typename T>
TC_DEVICE T shfl_xor(T v, int mask) {
  if constexpr (sizeof(T) == 8) {
    long long bits = bitcast<long long>(v);
#ifdef TC_HIP
    bits = __shfl_xor(bits, mask);
#else
    bits = __shfl_xor_sync(0xffffffffu, bits, mask);
#endif
    return bitcast<T>(bits);
  } else {
    union { T t; int i; } u;  // narrow types travel in the low bytes of a 32-bit word
    u.i = 0;
    u.t = v;
#ifdef TC_HIP
    u.i = __shfl_xor(u.i, mask);
#else
    u.i = __shfl_xor_sync(0xffffffffu, u.i, mask);
#endif
    return u.t;
  }
}

// The value held by lane `src` of this warp (every lane takes part), for any type of 1,
// 2, 4 or 8 bytes.
template <typename T>
TC_DEVICE T shfl(T v, int src) {
  if constexpr (sizeof(T) == 8) {
    long long bits = bitcast<long long>(v);
#ifdef TC_HIP
    bits = __shfl(bits, src);
#else
    bits = __shfl_sync(0xffffffffu, bits, src);
#endif
    return bitcast<T>(bits);
  } else {
    union { T t; int i; } u;
    u.i = 0;
    u.t = v;
#ifdef TC_HIP
    u.i = __shfl(u.i, src);
#else
    u.i = __shfl_sync(0xffffffffu, u.i, src);
#endif
    return u.t;
  }
}

// One 32- or 64-bit word from lane (this lane - delta) when UP, else (this lane + delta);
// a lane with none there keeps its own.  (No lambdas: NVRTC 13.0 takes an unannotated
// lambda for a host function and refuses it in device code.)
template <bool UP, typename W>
TC_DEVICE W shfl_word(W bits, int delta) {
#ifdef TC_HIP
  return UP ? __shfl_up(bits, delta) : __shfl_down(bits, delta);
#else
  return UP ? __shfl_up_sync(0xffffffffu, bits, delta)
            : __shfl_down_sync(0xffffffffu, bits, delta);
#endif
}

// Any value of 1, 2, 4 or 8 bytes, shifted along the lanes as `shfl_word` does.
template <bool UP, typename T>
TC_DEVICE T shfl_shift(T v, int delta) {
  if constexpr (sizeof(T) == 8) {
    return bitcast<T>(shfl_word<UP>(bitcast<long long>(v), delta));
  } else {
    union { T t; int i; } u;  // narrow types travel in the low bytes of a 32-bit word
    u.i = 0;
    u.t = v;
    u.i = shfl_word<UP>(u.i, delta);
    return u.t;
  }
}

// The value held by lane (this lane - delta); a lane with none before keeps its own.
template <typename T>
TC_DEVICE T shfl_up(T v, int delta) { return shfl_shift<true>(v, delta); }

// The value held by lane (this lane + delta); a lane with none after keeps its own.
template <typename T>
TC_DEVICE T shfl_down(T v, int delta) { return shfl_shift<false>(v, delta); }

// ---- tl.dot: shared-memory tiles, ldmatrix, mma.sync and cp.async (NVIDIA, sm_80+) -------

// A dot operand tile lives in shared memory as rows of 16-byte chunks.  Chunk c of row r is
// stored at chunk position c ^ f(r), f(r) < 8: the 8 rows one ldmatrix (or one warp's
// stores) touch then fall in 8 different bank groups, so neither conflicts.
template <int CHUNKS>  // 16-byte chunks per tile row
TC_DEVICE int swizzled_chunk(int row, int chunk) {
  constexpr int span = CHUNKS < 8 ? CHUNKS : 8;
  constexpr int rows_per_128b = CHUNKS < 8 ? 8 / CHUNKS : 1;
  return row * CHUNKS + (chunk ^ ((row / rows_per_128b) % span));
}

#ifndef TC_HIP
TC_DEVICE unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Four (two) 8 x 8 matrices of 16-bit elements; lane i gives the address of row i % 8 of
// matrix i / 8.  `.trans` hands each lane a column pair instead of a row pair.  Into four
// registers of the caller's choosing (B fragments of two mma tiles), or into one
// fragment's array (A's).  Untransposed B comes from a K-major tile (each of B's columns a
// tile row), transposed A from an M-major one (each of A's columns a tile row).
TC_DEVICE void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                           unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
TC_DEVICE void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                 unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
TC_DEVICE void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  ldmatrix_x4(r[0], r[1], r[2], r[3], addr);
}
TC_DEVICE void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  ldmatrix_x4_trans(r[0], r[1], r[2], r[3], addr);
}
TC_DEVICE void ldmatrix_x2(unsigned& r0, unsigned& r1, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1) : "r"(addr));
}
TC_DEVICE void ldmatrix_x2_trans(unsigned& r0, unsigned& r1, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r0), "=r"(r1) : "r"(addr));
}

// The reverse (sm_90+): four 8 x 8 matrices of 16-bit elements stored, lane i giving the
// address of row i % 8 of matrix i / 8 and holding, in register j, its row i / 4, columns
// 2 (i % 4) and 2 (i % 4) + 1 of matrix j — a tensor-core accumulator's pairs as they are.
// One instruction moves 16 bytes a lane, each lane's address computed once for four pairs.
TC_DEVICE void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

// D = A B + D for one 16 x 8 output tile of a warp; d0..d3 are the C fragment (rows g and
// g + 8, columns 2 (lane % 4) and + 1, g = lane / 4).
TC_DEVICE void mma_m16n8k16_f16(float& d0, float& d1, float& d2, float& d3,
                                const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
TC_DEVICE void mma_m16n8k16_bf16(float& d0, float& d1, float& d2, float& d3,
                                 const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
TC_DEVICE void mma_m16n8k8_tf32(float& d0, float& d1, float& d2, float& d3,
                                const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
TC_DEVICE void mma_m16n8k32_s8(int& d0, int& d1, int& d2, int& d3,
                               const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- Hopper warpgroup MMA (sm_90a) ----
// Operand tiles for wgmma: A is K-major with 64-byte rows (K = 32) or 128-byte swizzle
// atoms (K a multiple of 64); B is N-major in atoms of 64 columns x K rows.  A shared
// memory matrix descriptor gives the tensor cores a tile's address, the byte strides
// between 8-row groups (SBO) and between atoms (LBO), and the swizzle (1: 128 B, 2: 64 B).
TC_DEVICE unsigned long long wgmma_descriptor(unsigned address, unsigned lbo, unsigned sbo,
                                              unsigned long long swizzle) {
  return static_cast<unsigned long long>((address & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<unsigned long long>((sbo >> 4) & 0x3FFF) << 32) | (swizzle << 62);
}

// This thread's warpgroup (4 warps), read from lane 0 of its warp: the compiler then knows
// it is one value for the warp and keeps what is derived from it (the A descriptors of the
// warpgroup's rows) in uniform registers, which wgmma reads directly.
TC_DEVICE int warpgroup_id() {
  int id;
  asm("shfl.sync.idx.b32 %0, %1, 0, 0x1f, 0xffffffff;"
      : "=r"(id) : "r"(static_cast<int>(threadIdx.x / (4 * TC_WARP_SIZE))));
  return id;
}

// Row of the A tile in shared memory that holds the accumulator's logical row `row`.
// The accumulator is tilecc's mma layout (8 rows per warp, repeated); a wgmma warp owns 16
// consecutive rows of its warpgroup's m64 slice, so rows are placed where the instruction
// computes them.
template <int WARPS, int ROWS_PER_GROUP>
TC_DEVICE int wgmma_a_row(int row) {
  const int g = row % 8, warp = (row / 8) % WARPS, rep = row / (8 * WARPS);
  return (warp / 4) * ROWS_PER_GROUP + 64 * (rep / 2) + 16 * (warp % 4) + 8 * (rep % 2) + g;
}

// An empty asm that "reads and writes" a register: the compiler keeps the value in place.
TC_DEVICE void fence_operand(float& x) { asm volatile("" : "+f"(x) :: "memory"); }
// The same for a value worked out once before a loop (where a thread's copies land in a
// stage): the compiler can no longer work it out again at each use inside the loop, which
// ptxas otherwise does to spare the register (a hundred instructions per K step).
TC_DEVICE void keep_in_register(unsigned& x) { asm volatile("" : "+r"(x)); }
// ... and for a pointer of a block held through a loop (each pointer advanced by one
// offset): the compiler no longer rebuilds the block from one of its pointers at each use.
template <class T>
TC_DEVICE void keep_in_register(T*& p) { asm volatile("" : "+l"(p)); }
// wgmma exists on sm_90a only.  nvcc -arch=sm_90a also compiles each kernel for compute_90
// PTX (which a later GPU would JIT) and, like nvcc's host pass, reads the kernels' bodies
// there: that PTX gets the same functions, trapping, since it cannot run them.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
#define TC_WGMMA_ASM(...) asm volatile(__VA_ARGS__)
#elif defined(__NVCC__) && __CUDA_ARCH__ >= 900
#define TC_WGMMA_ASM(...) __trap()
#endif
#ifdef TC_WGMMA_ASM
TC_DEVICE void wgmma_fence() { TC_WGMMA_ASM("wgmma.fence.sync.aligned;" ::: "memory"); }
TC_DEVICE void wgmma_commit() { TC_WGMMA_ASM("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int PENDING>  // until at most PENDING groups of this warpgroup are in flight
TC_DEVICE void wgmma_wait() {
  TC_WGMMA_ASM("wgmma.wait_group.sync.aligned %0;" :: "n"(PENDING) : "memory");
}
// Warp roles (passes.warp_roles): a warpgroup gives registers back to the SM, or takes
// them, down or up to COUNT a thread (every warp of the warpgroup executes it)
template <int COUNT> TC_DEVICE void registers_down() {
  TC_WGMMA_ASM("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(COUNT));
}
template <int COUNT> TC_DEVICE void registers_up() {
  TC_WGMMA_ASM("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(COUNT));
}
// Two 16-bit values in one register, as pack2, by an instruction the compiler keeps where
// it is written: after the wait that retired the product still reading the register's
// previous value (the compiler would otherwise pack them earlier, into that register, and
// ptxas would serialize the products to keep the value the product reads)
template <typename T> TC_DEVICE unsigned pack2_ordered(T lo, T hi) {
  unsigned packed = 0;
  TC_WGMMA_ASM("mov.b32 %0, {%1, %2};" : "=r"(packed) : "h"(lo.bits), "h"(hi.bits));
  return packed;
}
// The same of two floats converted as cast_pair converts them (cvt.rn.{f16,bf16}x2.f32):
// the conversion itself is the instruction kept after the wait (a move of a pair converted
// before it ptxas merges into the conversion)
template <typename To> TC_DEVICE unsigned cast_pair_ordered(float lo, float hi) {
  unsigned packed = 0;
  if constexpr (is_same<To, half>::value) {
    TC_WGMMA_ASM("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  } else {
    TC_WGMMA_ASM("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  }
  return packed;
}
// The multiplications, one per tile width, input type and A operand (each names all of
// the thread's accumulator registers).
// --- GENERATED by scripts/generate_wgmma.py: begin (do not edit by hand) ---
// wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n32k16_bf16_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "%16, %17, p, 1, 1, %20, %19;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n32k16_bf16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "{%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n64k16_bf16_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "%32, %33, p, 1, 1, %36, %35;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n64k16_bf16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "{%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n128k16_bf16_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "%64, %65, p, 1, 1, %68, %67;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n128k16_bf16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                        unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "{%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n192k16_bf16_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "%96, %97, p, 1, 1, %100, %99;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n192k16_bf16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                        unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "{%96, %97, %98, %99}, %100, p, 1, 1, %102;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n256k16_bf16_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "%128, %129, p, 1, 1, %132, %131;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n256k16_bf16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                        unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "{%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n32k16_f16_ss(float* lo, float* hi, unsigned long long a_desc,
                                      unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "%16, %17, p, 1, 1, %20, %19;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n32k16_f16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                      unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "{%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n64k16_f16_ss(float* lo, float* hi, unsigned long long a_desc,
                                      unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "%32, %33, p, 1, 1, %36, %35;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n64k16_f16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                      unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "{%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n128k16_f16_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "%64, %65, p, 1, 1, %68, %67;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n128k16_f16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "{%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n192k16_f16_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "%96, %97, p, 1, 1, %100, %99;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n192k16_f16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "{%96, %97, %98, %99}, %100, p, 1, 1, %102;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// A from shared memory (descriptor), K-major (TRANS_A 0) or M-major (1), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B, int TRANS_A = 0>
TC_DEVICE void wgmma_m64n256k16_f16_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "%128, %129, p, 1, 1, %132, %131;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "l"(a_desc), "l"(b_desc), "r"(1), "n"(TRANS_B), "n"(TRANS_A));
}
// wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// A from registers (4 packed pairs), B from shared memory (descriptor), N-major (TRANS_B 1) or K-major (0)
template <int TRANS_B>
TC_DEVICE void wgmma_m64n256k16_f16_rs(float* lo, float* hi, const unsigned (&a)[4],
                                       unsigned long long b_desc) {
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "{%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1), "n"(TRANS_B));
}
// wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n32k8_tf32_ss(float* lo, float* hi, unsigned long long a_desc,
                                      unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp32 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "%16, %17, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n64k8_tf32_ss(float* lo, float* hi, unsigned long long a_desc,
                                      unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp32 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "%32, %33, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n128k8_tf32_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp32 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "%64, %65, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n192k8_tf32_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp32 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "%96, %97, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n256k8_tf32_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp32 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "%128, %129, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n32k32_e4m3_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e4nv reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "%16, %17, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n64k32_e4m3_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e4nv reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "%32, %33, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n128k32_e4m3_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e4nv reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "%64, %65, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n192k32_e4m3_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e4nv reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "%96, %97, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n256k32_e4m3_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e4nv reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "%128, %129, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e5m2
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n32k32_e5m2_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e5 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e5m2 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "%16, %17, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n64k32_e5m2_ss(float* lo, float* hi, unsigned long long a_desc,
                                       unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e5 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
               "%32, %33, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n128k32_e5m2_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e5 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
               "%64, %65, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n192k32.f32.e5m2.e5m2
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n192k32_e5m2_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e5 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n192k32.f32.e5m2.e5m2 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
               "%96, %97, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2
// A from shared memory (descriptor), B from shared memory (descriptor), K-major
template <int TRANS_B>
TC_DEVICE void wgmma_m64n256k32_e5m2_ss(float* lo, float* hi, unsigned long long a_desc,
                                        unsigned long long b_desc) {
  static_assert(TRANS_B == 0, "wgmma of fp8e5 reads B K-major");
  TC_WGMMA_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
               "%128, %129, p, 1, 1;\n}\n"
               : "+f"(lo[0]), "+f"(lo[1]), "+f"(hi[0]), "+f"(hi[1]),
                 "+f"(lo[2]), "+f"(lo[3]), "+f"(hi[2]), "+f"(hi[3]),
                 "+f"(lo[4]), "+f"(lo[5]), "+f"(hi[4]), "+f"(hi[5]),
                 "+f"(lo[6]), "+f"(lo[7]), "+f"(hi[6]), "+f"(hi[7]),
                 "+f"(lo[8]), "+f"(lo[9]), "+f"(hi[8]), "+f"(hi[9]),
                 "+f"(lo[10]), "+f"(lo[11]), "+f"(hi[10]), "+f"(hi[11]),
                 "+f"(lo[12]), "+f"(lo[13]), "+f"(hi[12]), "+f"(hi[13]),
                 "+f"(lo[14]), "+f"(lo[15]), "+f"(hi[14]), "+f"(hi[15]),
                 "+f"(lo[16]), "+f"(lo[17]), "+f"(hi[16]), "+f"(hi[17]),
                 "+f"(lo[18]), "+f"(lo[19]), "+f"(hi[18]), "+f"(hi[19]),
                 "+f"(lo[20]), "+f"(lo[21]), "+f"(hi[20]), "+f"(hi[21]),
                 "+f"(lo[22]), "+f"(lo[23]), "+f"(hi[22]), "+f"(hi[23]),
                 "+f"(lo[24]), "+f"(lo[25]), "+f"(hi[24]), "+f"(hi[25]),
                 "+f"(lo[26]), "+f"(lo[27]), "+f"(hi[26]), "+f"(hi[27]),
                 "+f"(lo[28]), "+f"(lo[29]), "+f"(hi[28]), "+f"(hi[29]),
                 "+f"(lo[30]), "+f"(lo[31]), "+f"(hi[30]), "+f"(hi[31]),
                 "+f"(lo[32]), "+f"(lo[33]), "+f"(hi[32]), "+f"(hi[33]),
                 "+f"(lo[34]), "+f"(lo[35]), "+f"(hi[34]), "+f"(hi[35]),
                 "+f"(lo[36]), "+f"(lo[37]), "+f"(hi[36]), "+f"(hi[37]),
                 "+f"(lo[38]), "+f"(lo[39]), "+f"(hi[38]), "+f"(hi[39]),
                 "+f"(lo[40]), "+f"(lo[41]), "+f"(hi[40]), "+f"(hi[41]),
                 "+f"(lo[42]), "+f"(lo[43]), "+f"(hi[42]), "+f"(hi[43]),
                 "+f"(lo[44]), "+f"(lo[45]), "+f"(hi[44]), "+f"(hi[45]),
                 "+f"(lo[46]), "+f"(lo[47]), "+f"(hi[46]), "+f"(hi[47]),
                 "+f"(lo[48]), "+f"(lo[49]), "+f"(hi[48]), "+f"(hi[49]),
                 "+f"(lo[50]), "+f"(lo[51]), "+f"(hi[50]), "+f"(hi[51]),
                 "+f"(lo[52]), "+f"(lo[53]), "+f"(hi[52]), "+f"(hi[53]),
                 "+f"(lo[54]), "+f"(lo[55]), "+f"(hi[54]), "+f"(hi[55]),
                 "+f"(lo[56]), "+f"(lo[57]), "+f"(hi[56]), "+f"(hi[57]),
                 "+f"(lo[58]), "+f"(lo[59]), "+f"(hi[58]), "+f"(hi[59]),
                 "+f"(lo[60]), "+f"(lo[61]), "+f"(hi[60]), "+f"(hi[61]),
                 "+f"(lo[62]), "+f"(lo[63]), "+f"(hi[62]), "+f"(hi[63])
               : "l"(a_desc), "l"(b_desc), "r"(1));
}
// --- GENERATED by scripts/generate_wgmma.py: end ---
#endif
// A barrier of the program's first THREADS threads (named barrier 1): a kernel's consumer
// warps, whose producer warpgroup takes no part (passes.warp_roles)
template <int THREADS> TC_DEVICE void sync_consumers() {
  asm volatile("bar.sync 1, %0;" :: "n"(THREADS) : "memory");
}
// Shared-memory stores of this thread made visible to the tensor cores' and the copy
// engine's reads (the async proxy) before a barrier hands the tile over.
TC_DEVICE void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Asynchronous global → shared copies of 4, 8 or 16 bytes; `src_bytes` < size fills the
// rest with zeros (0: a masked-off vector reads nothing).
template <int BYTES>
TC_DEVICE void cp_async(unsigned dst, const void* src, int src_bytes) {
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :: "r"(dst), "l"(src), "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;"
                 :: "r"(dst), "l"(src), "n"(BYTES), "r"(src_bytes));
  }
}
TC_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
// One arrival on the mbarrier at `bar` once every cp.async this thread issued before has
// landed (counted among the arrivals the barrier was initialized with)
TC_DEVICE void cp_async_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(bar) : "memory");
}
template <int PENDING>  // wait until at most PENDING groups are still in flight
TC_DEVICE void cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(PENDING)); }

// ---- TMA (sm_90): the copy engine moves a box of a tensor into shared memory, swizzled as
// the tensor map says, and counts the bytes it delivered on an mbarrier ------------------
// A CUtensorMap (128 opaque bytes, encoded on the host), taken by value as a
// __grid_constant__ parameter so that copies can name it by address.
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

TC_DEVICE void mbarrier_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(arrivals) : "memory");
}
TC_DEVICE void mbarrier_inval(unsigned bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(bar) : "memory");
}
// initialized barriers, visible to the copy engine (a __syncthreads then shows them to the
// other threads)
TC_DEVICE void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// this thread's arrival, announcing the bytes the copies of the phase will deliver
TC_DEVICE void mbarrier_expect_bytes(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(bar), "r"(bytes) : "memory");
}
// 16 bytes of shared memory set to zero (places no copy writes that a product reads)
TC_DEVICE void zero_16_bytes(void* at) { *reinterpret_cast<uint4*>(at) = make_uint4(0, 0, 0, 0); }
// this thread's arrival (a warp's lane 0 speaking for the warp: one of the arrivals the
// barrier was initialized with), releasing what the thread read before it
TC_DEVICE void mbarrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
TC_DEVICE bool mbarrier_try_wait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{\n  .reg .pred p;\n  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "  selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done;
}
// until the barrier's phase of this parity has completed: its copies have landed
TC_DEVICE void mbarrier_wait(unsigned bar, unsigned parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}
// The copy engine stores the box at (c0, c1) (innermost coordinate first) from shared
// memory, writing only what lies inside the tensor; the stores issued since the last
// commit form one group, and tma_store_wait_read<N> waits until at most N groups still
// read shared memory (the tile may then be written again, or the program end).
TC_DEVICE void tma_store_2d(const TensorMap& map, unsigned src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               :: "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(src)
               : "memory");
}
// The same through a map of 3 to 5 dims (a descriptor's block with leading dims of 1:
// passes.unit_dims).
TC_DEVICE void tma_store_3d(const TensorMap& map, unsigned src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
               :: "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2),
                  "r"(src) : "memory");
}
TC_DEVICE void tma_store_4d(const TensorMap& map, unsigned src, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"
               " [%0, {%1, %2, %3, %4}], [%5];"
               :: "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2),
                  "r"(c3), "r"(src) : "memory");
}
TC_DEVICE void tma_store_5d(const TensorMap& map, unsigned src, int c0, int c1, int c2, int c3,
                            int c4) {
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group"
               " [%0, {%1, %2, %3, %4, %5}], [%6];"
               :: "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2),
                  "r"(c3), "r"(c4), "r"(src) : "memory");
}
TC_DEVICE void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N> TC_DEVICE void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
// the box at (c0, c1) (innermost coordinate first; outside the tensor: the map's fill)
TC_DEVICE void tma_load_2d(unsigned dst, const TensorMap& map, int c0, int c1, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1),
                  "r"(bar) : "memory");
}
// The same through a map of 3 to 5 dims (A's rows viewed as several, in the order a box
// fills shared memory: passes.pipeline.a_rows_split).
TC_DEVICE void tma_load_3d(unsigned dst, const TensorMap& map, int c0, int c1, int c2,
                           unsigned bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1),
                  "r"(c2), "r"(bar) : "memory");
}
TC_DEVICE void tma_load_4d(unsigned dst, const TensorMap& map, int c0, int c1, int c2, int c3,
                           unsigned bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5}], [%6];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1),
                  "r"(c2), "r"(c3), "r"(bar) : "memory");
}
TC_DEVICE void tma_load_5d(unsigned dst, const TensorMap& map, int c0, int c1, int c2, int c3,
                           int c4, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1),
                  "r"(c2), "r"(c3), "r"(c4), "r"(bar) : "memory");
}
#endif

#ifdef TC_HIP
// ---- tl.dot on AMD CDNA: MFMA (gfx90a; gfx940-942) ----------------------------------------
// One wave's matrix instruction: each lane gives its run of K elements of A's row and of
// B's column (a Vec, one LDS read each) and the instruction's accumulator registers, slot
// q being acc[q * STRIDE] of the block's registers (tilecc's accumulator is the
// instruction tile repeated; matrix_units_amd.py has the lane layouts).  The builtin is
// named only where a kernel calls it: the generic lambda defers it to the architectures
// whose rows the dot pass planned on.
typedef _Float16 mfma_f16x4 __attribute__((ext_vector_type(4)));
typedef short mfma_i16x4 __attribute__((ext_vector_type(4)));
typedef float mfma_f32x2 __attribute__((ext_vector_type(2)));

template <int SLOTS, int STRIDE, typename Acc, typename Instruction>
TC_DEVICE void mfma_apply(Acc* acc, Instruction issue) {
  typedef Acc Slots __attribute__((ext_vector_type(SLOTS)));
  Slots c;
#pragma unroll
  for (int q = 0; q < SLOTS; ++q) c[q] = acc[q * STRIDE];
  c = issue(c);
#pragma unroll
  for (int q = 0; q < SLOTS; ++q) acc[q * STRIDE] = c[q];
}

#define TC_MFMA(NAME, ACC, SLOTS, IN, KPL, OPERAND)                                       \
  template <int STRIDE>                                                                     \
  TC_DEVICE void mfma_##NAME(ACC* acc, const Vec<IN, KPL>& a, const Vec<IN, KPL>& b) {     \
    mfma_apply<SLOTS, STRIDE>(acc, [&](auto c) {                                            \
      return __builtin_amdgcn_mfma_##NAME(bitcast<OPERAND>(a), bitcast<OPERAND>(b), c, 0, 0, \
                                          0);                                               \
    });                                                                                     \
  }
// CDNA2 and CDNA3
TC_MFMA(f32_32x32x8f16, float, 16, half, 4, mfma_f16x4)
TC_MFMA(f32_16x16x16f16, float, 4, half, 4, mfma_f16x4)
TC_MFMA(f32_32x32x8bf16_1k, float, 16, bfloat16, 4, mfma_i16x4)
TC_MFMA(f32_16x16x16bf16_1k, float, 4, bfloat16, 4, mfma_i16x4)
TC_MFMA(f32_32x32x2f32, float, 16, float, 1, float)
TC_MFMA(f32_16x16x4f32, float, 4, float, 1, float)
// CDNA2 only: int8 four a lane
TC_MFMA(i32_32x32x8i8, int, 16, signed char, 4, int)
TC_MFMA(i32_16x16x16i8, int, 4, signed char, 4, int)
// CDNA3 only: int8 and fp8 (FNUZ) eight a lane, xf32 two
TC_MFMA(i32_32x32x16_i8, int, 16, signed char, 8, long)
TC_MFMA(i32_16x16x32_i8, int, 4, signed char, 8, long)
TC_MFMA(f32_32x32x16_fp8_fp8, float, 16, fp8e4b8, 8, long)
TC_MFMA(f32_16x16x32_fp8_fp8, float, 4, fp8e4b8, 8, long)
TC_MFMA(f32_32x32x16_bf8_bf8, float, 16, fp8e5b16, 8, long)
TC_MFMA(f32_16x16x32_bf8_bf8, float, 4, fp8e5b16, 8, long)
TC_MFMA(f32_32x32x4_xf32, float, 16, float, 2, mfma_f32x2)
TC_MFMA(f32_16x16x8_xf32, float, 4, float, 2, mfma_f32x2)
#undef TC_MFMA
#endif

// ---- atomics: Triton's operations on the types CUDA and HIP provide -----------------------
//
// Triton's scopes: scope="gpu" takes the device-wide atomics, scope="cta" the block-scoped
// ones (CUDA's _block forms, HIP's workgroup scope), scope="sys" (the host and peer devices
// too) the _system forms; the fences around them (below) have the same scope.
enum Scope { kGpu, kSystem, kCta };

// The hardware operations at a scope, on the types both CUDA and HIP declare them for
// (int, unsigned, unsigned long long; add, exchange and cas also float, double).
#ifdef TC_HIP
#define TC_CTA_FORM(NAME, HIP_BUILTIN) \
  return HIP_BUILTIN(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
#else
#define TC_CTA_FORM(NAME, HIP_BUILTIN) return NAME##_block(p, v);
#endif
#define TC_NATIVE(NAME, HIP_BUILTIN)                                                          \
  template <Scope SC, typename T> TC_DEVICE T native_##NAME(T* p, T v) {                      \
    if constexpr (SC == kSystem) return NAME##_system(p, v);                                  \
    else if constexpr (SC == kCta) { TC_CTA_FORM(NAME, HIP_BUILTIN) }                         \
    else return NAME(p, v);                                                                   \
  }
TC_NATIVE(atomicAdd, __hip_atomic_fetch_add)
TC_NATIVE(atomicAnd, __hip_atomic_fetch_and)
TC_NATIVE(atomicOr, __hip_atomic_fetch_or)
TC_NATIVE(atomicXor, __hip_atomic_fetch_xor)
TC_NATIVE(atomicExch, __hip_atomic_exchange)
TC_NATIVE(atomicMax, __hip_atomic_fetch_max)
TC_NATIVE(atomicMin, __hip_atomic_fetch_min)
#undef TC_NATIVE
#undef TC_CTA_FORM
template <Scope SC, typename T> TC_DEVICE T native_atomicCAS(T* p, T cmp, T v) {
  if constexpr (SC == kSystem) {
    return atomicCAS_system(p, cmp, v);
  } else if constexpr (SC == kCta) {
#ifdef TC_HIP
    __hip_atomic_compare_exchange_strong(p, &cmp, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                         __HIP_MEMORY_SCOPE_WORKGROUP);
    return cmp;  // what was there: cmp where it swapped, the value found where it did not
#else
    return atomicCAS_block(p, cmp, v);
#endif
  } else {
    return atomicCAS(p, cmp, v);
  }
}

// A signed 64-bit operation through the unsigned one (two's complement: the same bits).
template <typename T> TC_DEVICE unsigned long long* as_u64(T* p) {
  return reinterpret_cast<unsigned long long*>(p);
}

// 16-bit values (fp16 / bf16 add, 16-bit compare-and-swap): a compare-and-swap loop on
// the aligned 32-bit word that holds the value, replacing its half with update(old); the
// other half is left as it is found.  Returns the old value.
template <Scope SC, typename T, typename F> TC_DEVICE T update16(T* p, F update) {
  const unsigned long long address = reinterpret_cast<unsigned long long>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(address & ~3ull);
  const unsigned int shift = static_cast<unsigned int>(address & 2) * 8;
  unsigned int old = *reinterpret_cast<volatile unsigned int*>(word);
  while (true) {
    const T current = bitcast<T>(static_cast<unsigned short>(old >> shift));
    bool write = true;
    const T next = update(current, write);
    if (!write) return current;
    const unsigned int desired = (old & ~(0xffffu << shift)) |
                                 (static_cast<unsigned int>(bitcast<unsigned short>(next)) << shift);
    const unsigned int seen = native_atomicCAS<SC>(word, old, desired);
    if (seen == old) return current;
    old = seen;
  }
}

// fp16 / bf16 add: the hardware's atom.add.noftz (fp16 from sm_70, bf16 from sm_90; at
// device scope for scope="cta", stronger than asked), else the compare-and-swap loop (one
// rounding of the fp32 sum).
template <Scope SC, typename T> TC_DEVICE T atomic_add16(T* p, T v) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if constexpr (is_same<T, half>::value || (is_same<T, bfloat16>::value && __CUDA_ARCH__ >= 900)) {
    unsigned short old;
    if constexpr (is_same<T, half>::value && SC == kSystem)
      asm volatile("atom.sys.global.add.noftz.f16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v.bits) : "memory");
    else if constexpr (is_same<T, half>::value)
      asm volatile("atom.global.add.noftz.f16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v.bits) : "memory");
    else if constexpr (SC == kSystem)
      asm volatile("atom.sys.global.add.noftz.bf16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v.bits) : "memory");
    else
      asm volatile("atom.global.add.noftz.bf16 %0, [%1], %2;" : "=h"(old) : "l"(p), "h"(v.bits) : "memory");
    return T::from_bits(old);
  }
#endif
  return update16<SC>(p, [v](T old, bool&) { return T(float(old) + float(v)); });
}

// Two consecutive fp16 / bf16 elements, the first 4-byte aligned, added in one packed
// instruction (atom.add.noftz.f16x2 / .bf16x2): the hardware has no 16-bit add of its own,
// so element by element each is a compare-and-swap loop, which retries under contention
// (split-K programs adding into one output).  The two old values are written to old_lo
// and old_hi.  Elsewhere (HIP, fp16 before sm_70, bf16 before sm_90) one element at a time.
template <Scope SC = kGpu, typename T>
TC_DEVICE void atomic_add_pair(T& old_lo, T& old_hi, T* p, T lo, T hi) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if constexpr (is_same<T, half>::value || (is_same<T, bfloat16>::value && __CUDA_ARCH__ >= 900)) {
    const unsigned int v = static_cast<unsigned int>(lo.bits) |
                           (static_cast<unsigned int>(hi.bits) << 16);
    unsigned int old;
    if constexpr (is_same<T, half>::value && SC == kSystem)
      asm volatile("atom.sys.global.add.noftz.f16x2 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    else if constexpr (is_same<T, half>::value)
      asm volatile("atom.global.add.noftz.f16x2 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    else if constexpr (SC == kSystem)
      asm volatile("atom.sys.global.add.noftz.bf16x2 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    else
      asm volatile("atom.global.add.noftz.bf16x2 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    old_lo = T::from_bits(static_cast<unsigned short>(old));
    old_hi = T::from_bits(static_cast<unsigned short>(old >> 16));
    return;
  }
#endif
  old_lo = atomic_add16<SC>(p, lo);
  old_hi = atomic_add16<SC>(p + 1, hi);
}

// The same, its old values unused: red, which returns nothing and does not wait.
template <Scope SC = kGpu, typename T> TC_DEVICE void reduce_add_pair(T* p, T lo, T hi) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  if constexpr (is_same<T, half>::value || (is_same<T, bfloat16>::value && __CUDA_ARCH__ >= 900)) {
    const unsigned int v = static_cast<unsigned int>(lo.bits) |
                           (static_cast<unsigned int>(hi.bits) << 16);
    if constexpr (is_same<T, half>::value && SC == kSystem)
      asm volatile("red.sys.global.add.noftz.f16x2 [%0], %1;" :: "l"(p), "r"(v) : "memory");
    else if constexpr (is_same<T, half>::value)
      asm volatile("red.global.add.noftz.f16x2 [%0], %1;" :: "l"(p), "r"(v) : "memory");
    else if constexpr (SC == kSystem)
      asm volatile("red.sys.global.add.noftz.bf16x2 [%0], %1;" :: "l"(p), "r"(v) : "memory");
    else
      asm volatile("red.global.add.noftz.bf16x2 [%0], %1;" :: "l"(p), "r"(v) : "memory");
    return;
  }
#endif
  atomic_add16<SC>(p, lo);
  atomic_add16<SC>(p + 1, hi);
}

// 4 or 8 consecutive fp16 / bf16 elements, 8- or 16-byte aligned, their old values unused:
// one vector red (.v2 / .v4 of f16x2 / bf16x2, sm_90); elsewhere pair by pair.  2 or 4
// consecutive fp32 elements likewise (.v2 / .v4 .f32, sm_90); elsewhere one by one.
#define TC_RED_VEC(SCOPE, VEC, TYPE, ...) \
  asm volatile("red" SCOPE ".global.add.noftz." VEC "." TYPE " [%0], " __VA_ARGS__ : "memory")
#define TC_RED_VEC_F32(SCOPE, VEC, ...) \
  asm volatile("red" SCOPE ".global.add." VEC ".f32 [%0], " __VA_ARGS__ : "memory")
template <Scope SC = kGpu, typename T, int N> TC_DEVICE void reduce_add_vec(T* p, const Vec<T, N>& v) {
#if !defined(TC_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr ((N == 4 || N == 8) && is_half_like<T>::value) {
    constexpr bool h = is_same<T, half>::value, sys = SC == kSystem;
    unsigned w[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) w[i] = pack2(v[2 * i], v[2 * i + 1]);
    if constexpr (N == 4) {
#define TC_ARGS "{%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1])
      if constexpr (h && sys) TC_RED_VEC(".sys", "v2", "f16x2", TC_ARGS);
      else if constexpr (h) TC_RED_VEC("", "v2", "f16x2", TC_ARGS);
      else if constexpr (sys) TC_RED_VEC(".sys", "v2", "bf16x2", TC_ARGS);
      else TC_RED_VEC("", "v2", "bf16x2", TC_ARGS);
#undef TC_ARGS
    } else {
#define TC_ARGS "{%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
      if constexpr (h && sys) TC_RED_VEC(".sys", "v4", "f16x2", TC_ARGS);
      else if constexpr (h) TC_RED_VEC("", "v4", "f16x2", TC_ARGS);
      else if constexpr (sys) TC_RED_VEC(".sys", "v4", "bf16x2", TC_ARGS);
      else TC_RED_VEC("", "v4", "bf16x2", TC_ARGS);
#undef TC_ARGS
    }
  } else if constexpr ((N == 2 || N == 4) && is_same<T, float>::value) {
    constexpr bool sys = SC == kSystem;
    if constexpr (N == 2) {
#define TC_ARGS "{%1, %2};" ::"l"(p), "f"(v[0]), "f"(v[1])
      if constexpr (sys) TC_RED_VEC_F32(".sys", "v2", TC_ARGS);
      else TC_RED_VEC_F32("", "v2", TC_ARGS);
#undef TC_ARGS
    } else {
#define TC_ARGS "{%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
      if constexpr (sys) TC_RED_VEC_F32(".sys", "v4", TC_ARGS);
      else TC_RED_VEC_F32("", "v4", TC_ARGS);
#undef TC_ARGS
    }
  } else
#endif
  if constexpr (is_same<T, float>::value) {
#pragma unroll
    for (int i = 0; i < N; ++i) native_atomicAdd<SC>(p + i, v[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; i += 2) reduce_add_pair<SC>(p + i, v[i], v[i + 1]);
  }
}
#undef TC_RED_VEC
#undef TC_RED_VEC_F32

template <Scope SC = kGpu, typename T> TC_DEVICE T atomic_add(T* p, T v) {
  if constexpr (is_half_like<T>::value) {
    return atomic_add16<SC>(p, v);
  } else if constexpr (is_same<T, long long>::value) {
    return static_cast<long long>(
        native_atomicAdd<SC>(as_u64(p), static_cast<unsigned long long>(v)));
  } else {
    return native_atomicAdd<SC>(p, v);
  }
}

#define TC_BITWISE(NAME, NATIVE)                                                              \
  template <Scope SC = kGpu, typename T> TC_DEVICE T NAME(T* p, T v) {                        \
    if constexpr (is_same<T, long long>::value) {                                             \
      return static_cast<long long>(NATIVE<SC>(as_u64(p), static_cast<unsigned long long>(v))); \
    } else {                                                                                  \
      return NATIVE<SC>(p, v);                                                                \
    }                                                                                         \
  }
TC_BITWISE(atomic_and, native_atomicAnd)
TC_BITWISE(atomic_or, native_atomicOr)
TC_BITWISE(atomic_xor, native_atomicXor)
#undef TC_BITWISE

template <Scope SC = kGpu, typename T> TC_DEVICE T atomic_cas(T* p, T cmp, T v) {
  if constexpr (sizeof(T) == 2) {  // bits compared, as LLVM's cmpxchg compares them
    const unsigned short expected = bitcast<unsigned short>(cmp);
    return update16<SC>(p, [expected, v](T old, bool& write) {
      write = bitcast<unsigned short>(old) == expected;
      return v;
    });
  } else if constexpr (is_same<T, int>::value || is_same<T, unsigned int>::value ||
                       is_same<T, unsigned long long>::value) {
    return native_atomicCAS<SC>(p, cmp, v);
  } else if constexpr (sizeof(T) == 4) {
    return bitcast<T>(native_atomicCAS<SC>(reinterpret_cast<unsigned int*>(p),
                                           bitcast<unsigned int>(cmp), bitcast<unsigned int>(v)));
  } else {
    return bitcast<T>(native_atomicCAS<SC>(as_u64(p), bitcast<unsigned long long>(cmp),
                                           bitcast<unsigned long long>(v)));
  }
}

template <Scope SC = kGpu, typename T> TC_DEVICE T atomic_xchg(T* p, T v) {
  if constexpr (is_same<T, int>::value || is_same<T, unsigned int>::value ||
                is_same<T, unsigned long long>::value || is_same<T, float>::value) {
    return native_atomicExch<SC>(p, v);
  } else {
    return bitcast<T>(native_atomicExch<SC>(as_u64(p), bitcast<unsigned long long>(v)));
  }
}

// Signed 64-bit max / min: native on CUDA; HIP (ROCm 5) declares only the unsigned forms,
// so a compare-and-swap loop there.
template <Scope SC, bool LARGEST> TC_DEVICE long long extreme_s64(long long* p, long long v) {
#ifdef TC_HIP
  long long old = *reinterpret_cast<volatile long long*>(p);
  while (LARGEST ? old < v : old > v) {
    const long long seen = static_cast<long long>(native_atomicCAS<SC>(
        as_u64(p), static_cast<unsigned long long>(old), static_cast<unsigned long long>(v)));
    if (seen == old) break;
    old = seen;
  }
  return old;
#else
  if constexpr (LARGEST) return native_atomicMax<SC>(p, v);
  else return native_atomicMin<SC>(p, v);
#endif
}

// max / min: native for integers.  Floats as Triton computes them, on their bit patterns:
// a value whose sign bit is clear by a signed integer max (min), one whose sign bit is
// set by an unsigned integer min (max).  That is the order -NaN < -inf < .. < -0.0 < +0.0
// < .. < +inf < +NaN: -0.0 and +0.0 are told apart, and a NaN is kept or written by
// its sign.
template <typename T> struct float_bits;
template <> struct float_bits<float> { using s = int; using u = unsigned int; };
template <> struct float_bits<double> { using s = long long; using u = unsigned long long; };

template <Scope SC, bool LARGEST, typename T> TC_DEVICE T extreme(T* p, T v) {
  if constexpr (is_float<T>::value) {
    using S = typename float_bits<T>::s;
    using U = typename float_bits<T>::u;
    if (bitcast<S>(v) >= 0) {
      return bitcast<T>(extreme<SC, LARGEST>(reinterpret_cast<S*>(p), bitcast<S>(v)));
    }
    return bitcast<T>(extreme<SC, !LARGEST>(reinterpret_cast<U*>(p), bitcast<U>(v)));
  } else if constexpr (is_same<T, long long>::value) {
    return extreme_s64<SC, LARGEST>(p, v);
  } else if constexpr (LARGEST) {
    return native_atomicMax<SC>(p, v);
  } else {
    return native_atomicMin<SC>(p, v);
  }
}
template <Scope SC = kGpu, typename T> TC_DEVICE T atomic_max(T* p, T v) {
  return extreme<SC, true>(p, v);
}
template <Scope SC = kGpu, typename T> TC_DEVICE T atomic_min(T* p, T v) {
  return extreme<SC, false>(p, v);
}

// Triton's memory orders around a relaxed hardware atomic: fences on the sides that the
// order asks for (a fence is at least as strong as the ordering required).
template <Scope SC = kGpu> TC_DEVICE void fence(bool wanted) {
  if (!wanted) return;
  if constexpr (SC == kSystem) __threadfence_system();
  else if constexpr (SC == kCta) __threadfence_block();
  else __threadfence();
}
template <Scope SC = kGpu> TC_DEVICE void fence_before(bool release) { fence<SC>(release); }
template <Scope SC = kGpu> TC_DEVICE void fence_after(bool acquire) { fence<SC>(acquire); }

// Layouts are generated per kernel (a struct per block placement, with each register's
// coordinates): see the kernel's header comment.

// ---- debugging ------------------------------------------------------------------------------

#ifdef TC_HIP
#define TC_TRAP() __builtin_trap()
#else
#define TC_TRAP() __trap()
#endif

#define TC_DEVICE_ASSERT(cond, msg, file, line)                                               \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      printf("%s:%d: program (%d, %d, %d) thread %d: device assertion failed: %s\n", file,   \
             line, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y),                \
             static_cast<int>(blockIdx.z), static_cast<int>(threadIdx.x), msg);               \
      TC_TRAP();                                                                              \
    }                                                                                         \
  } while (0)

}  // namespace tc
