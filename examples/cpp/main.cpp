// Calls the launchers that `tilecc export` wrote (see CMakeLists.txt) and checks every
// result against a CPU reference.  Prints one line per check and PASS or FAIL at the end;
// the exit status is 0 only for PASS.  Where no GPU can be used (none, or no driver for
// it) it prints SKIP and why, and exits 0: the build is what such a machine can check.
// The same file builds for CUDA and for HIP.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#ifdef __HIPCC__
#include "vector_add.hip.hpp"
#include "fused_elementwise.hip.hpp"
#include "softmax.hip.hpp"
#include "matmul.hip.hpp"
#define gpu(name) hip##name
using gpuError_t = hipError_t;
#else
#include "vector_add.cuh"
#include "fused_elementwise.cuh"
#include "softmax.cuh"
#include "matmul.cuh"
#define gpu(name) cuda##name
using gpuError_t = cudaError_t;
#endif

namespace {

bool all_ok = true;

void report(const char* what, bool ok) {
  std::printf("%-64s %s\n", what, ok ? "ok" : "FAILED");
  all_ok = all_ok && ok;
}

bool check_call(const char* what, gpuError_t err) {
  if (err != gpu(Success)) {
    std::printf("%-58s FAILED: %s\n", what, gpu(GetErrorString)(err));
    all_ok = false;
    return false;
  }
  return true;
}

// fp16 <-> fp32 on the host (round to nearest even), for inputs and the reference.
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
  if (x < 0x38800000u) {  // subnormal or zero
    float a;
    std::memcpy(&a, &x, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t rounded = x + 0xfffu + ((x >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float from_half(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  const uint32_t x = sign | (exp == 31 ? 0x7f800000u | (mant << 13)
                                       : ((exp + 112u) << 23) | (mant << 13));
  std::memcpy(&f, &x, 4);
  return f;
}

template <typename T>
struct DeviceBuffer {  // n elements, plus slack so that `data + 1` is a valid unaligned array
  T* data = nullptr;
  explicit DeviceBuffer(size_t n) { check_call("allocate", gpu(Malloc)(reinterpret_cast<void**>(&data), (n + 16) * sizeof(T))); }
  ~DeviceBuffer() { (void)gpu(Free)(data); }
  void upload(const std::vector<T>& h, size_t offset = 0) {
    check_call("copy to device", gpu(Memcpy)(data + offset, h.data(), h.size() * sizeof(T), gpu(MemcpyHostToDevice)));
  }
  std::vector<T> download(size_t n, size_t offset = 0) {
    std::vector<T> h(n);
    check_call("copy to host", gpu(Memcpy)(h.data(), data + offset, n * sizeof(T), gpu(MemcpyDeviceToHost)));
    return h;
  }
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.0f * 8.0f - 4.0f;
  }
  return v;
}

float silu_mul(float x, float y) { return x / (1.0f + std::exp(-x)) * y; }

// Vector add through the C++ launcher; `offset` elements into the buffers (1: unaligned).
void vector_add(int n, size_t offset, gpu(Stream_t) stream) {
  char what[96];
  std::snprintf(what, sizeof what, "vector_add n=%d offset=%zu (specialization %d)", n, offset,
                tilecc::vector_add::add_kernel_select(nullptr, nullptr, reinterpret_cast<float*>(offset * 4), n));
  const auto x = random_floats(n, 1), y = random_floats(n, 2);
  DeviceBuffer<float> dx(n), dy(n), dout(n);
  dx.upload(x, offset);
  dy.upload(y, offset);
  if (!check_call(what, tilecc::vector_add::add_kernel(dx.data + offset, dy.data + offset,
                                                        dout.data + offset, n, stream)) ||
      !check_call(what, gpu(StreamSynchronize)(stream)))
    return;
  const auto out = dout.download(n, offset);
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && out[i] == x[i] + y[i];
  report(what, ok);
}

void silu_mul_fp32(int n, size_t offset, gpu(Stream_t) stream) {
  char what[96];
  std::snprintf(what, sizeof what, "silu_mul fp32 n=%d offset=%zu", n, offset);
  const auto x = random_floats(n, 3), y = random_floats(n, 4);
  DeviceBuffer<float> dx(n), dy(n), dout(n);
  dx.upload(x, offset);
  dy.upload(y, offset);
  if (!check_call(what, tilecc::fused_elementwise::silu_mul_kernel(
                            dx.data + offset, dy.data + offset, dout.data + offset, n, stream)) ||
      !check_call(what, gpu(StreamSynchronize)(stream)))
    return;
  const auto out = dout.download(n, offset);
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && std::fabs(out[i] - silu_mul(x[i], y[i])) <= 1e-5f * (1.0f + std::fabs(out[i]));
  report(what, ok);
}

// fp16 goes through the extern "C" wrapper: 16-bit floats are uint16_t bits there.
void silu_mul_fp16(int n, gpu(Stream_t) stream) {
  char what[96];
  std::snprintf(what, sizeof what, "silu_mul fp16 n=%d (extern \"C\" wrapper)", n);
  std::vector<uint16_t> x(n), y(n);
  const auto xf = random_floats(n, 5), yf = random_floats(n, 6);
  for (int i = 0; i < n; ++i) x[i] = to_half(xf[i]), y[i] = to_half(yf[i]);
  DeviceBuffer<uint16_t> dx(n), dy(n), dout(n);
  dx.upload(x);
  dy.upload(y);
  if (!check_call(what, fused_elementwise_silu_mul_kernel_fp16_fp16_fp16_i32(dx.data, dy.data, dout.data, n, stream)) ||
      !check_call(what, gpu(StreamSynchronize)(stream)))
    return;
  const auto out = dout.download(n);
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    const float want = from_half(to_half(silu_mul(from_half(x[i]), from_half(y[i]))));
    ok = ok && std::fabs(from_half(out[i]) - want) <= 2e-3f * (1.0f + std::fabs(want));
  }
  report(what, ok);
  // Only a 16-byte aligned fp16 specialization was exported: an unaligned pointer is refused.
  const gpuError_t err = fused_elementwise_silu_mul_kernel_fp16_fp16_fp16_i32(dx.data + 1, dy.data, dout.data, n, stream);
  report("silu_mul fp16, unaligned x: refused with InvalidValue", err == gpu(ErrorInvalidValue));
}

// Row softmax of an n_rows x n_cols fp32 matrix (rows `stride` elements apart, in both
// input and output) through the C++ launcher, or the extern "C" wrapper; `offset`
// elements into the buffers (1: unaligned, the any-pointer specialization).  The last
// argument before the stream is the row count: the grid, one program per row.
void softmax(int n_rows, int n_cols, int stride, size_t offset, bool c_abi, gpu(Stream_t) stream) {
  char what[96];
  std::snprintf(what, sizeof what, "softmax %dx%d stride=%d offset=%zu%s", n_rows, n_cols,
                stride, offset, c_abi ? " (extern \"C\" wrapper)" : "");
  const size_t n = static_cast<size_t>(n_rows) * stride;
  const auto x = random_floats(n, 9);
  DeviceBuffer<float> dx(n), dout(n);
  dx.upload(x, offset);
  const gpuError_t err =
      c_abi ? softmax_softmax_kernel(dout.data + offset, dx.data + offset, stride, stride, n_cols, n_rows, stream)
            : tilecc::softmax::softmax_kernel(dout.data + offset, dx.data + offset, stride, stride, n_cols, n_rows, stream);
  if (!check_call(what, err) || !check_call(what, gpu(StreamSynchronize)(stream))) return;
  const auto out = dout.download(n, offset);
  bool ok = true;
  for (int r = 0; r < n_rows; ++r) {
    const float* row = x.data() + static_cast<size_t>(r) * stride;
    double m = row[0], sum = 0.0;
    for (int c = 1; c < n_cols; ++c) m = row[c] > m ? row[c] : m;
    for (int c = 0; c < n_cols; ++c) sum += std::exp(row[c] - m);
    for (int c = 0; c < n_cols; ++c) {
      const double want = std::exp(row[c] - m) / sum;
      const float got = out[static_cast<size_t>(r) * stride + c];
      ok = ok && std::fabs(got - want) <= 1e-6 + 1e-5 * want;
    }
  }
  report(what, ok);
}

// C = leaky_relu(A @ B) in fp16, M x K times K x N, row-major, through the extern "C"
// wrapper; checked against a float reference of the same fp16 inputs.
void matmul_fp16(int m, int n, int k, gpu(Stream_t) stream) {
  char what[96];
  std::snprintf(what, sizeof what, "matmul fp16 %dx%dx%d, leaky_relu (extern \"C\" wrapper)", m, k, n);
  std::vector<uint16_t> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n);
  const auto af = random_floats(a.size(), 10), bf = random_floats(b.size(), 11);
  for (size_t i = 0; i < a.size(); ++i) a[i] = to_half(af[i]);
  for (size_t i = 0; i < b.size(); ++i) b[i] = to_half(bf[i]);
  DeviceBuffer<uint16_t> da(a.size()), db(b.size()), dc(static_cast<size_t>(m) * n);
  da.upload(a);
  db.upload(b);
  if (!check_call(what, matmul_matmul_kernel(da.data, db.data, dc.data, m, n, k, k, 1, n, 1, n, 1, stream)) ||
      !check_call(what, gpu(StreamSynchronize)(stream)))
    return;
  const auto c = dc.download(static_cast<size_t>(m) * n);
  bool ok = true;
  for (int i = 0; i < m; i += 7) {  // every 7th row, all columns
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int t = 0; t < k; ++t)
        s += static_cast<double>(from_half(a[static_cast<size_t>(i) * k + t])) * from_half(b[static_cast<size_t>(t) * n + j]);
      const double want = s >= 0 ? s : 0.01 * s;
      const float got = from_half(c[static_cast<size_t>(i) * n + j]);
      ok = ok && std::fabs(got - want) <= 1e-2 + 2e-3 * std::fabs(want);
    }
  }
  report(what, ok);
}

}  // namespace

int main() {
  int devices = 0;
  const gpuError_t found = gpu(GetDeviceCount)(&devices);
  if (found != gpu(Success) || devices == 0) {
    std::printf("SKIP: no GPU to run the kernels on (%s)\n",
                found != gpu(Success) ? gpu(GetErrorString)(found) : "no device");
    return 0;
  }
  gpu(Stream_t) stream;
  check_call("create stream", gpu(StreamCreate)(&stream));
  vector_add(98765, 0, stream);  // aligned, ragged size: specialization 1
  vector_add(1 << 20, 0, stream);  // aligned, n % 16 == 0: specialization 0
  vector_add(4099, 1, stream);  // unaligned pointers: specialization 2
  // An empty grid launches nothing and succeeds, even with null pointers.
  report("vector_add n=0: nothing launched, success",
         tilecc::vector_add::add_kernel(nullptr, nullptr, nullptr, 0, stream) == gpu(Success));
  // The extern "C" wrapper of vector add.
  {
    const int n = 1000;
    const auto x = random_floats(n, 7), y = random_floats(n, 8);
    DeviceBuffer<float> dx(n), dy(n), dout(n);
    dx.upload(x);
    dy.upload(y);
    if (check_call("vector_add_add_kernel", vector_add_add_kernel(dx.data, dy.data, dout.data, n, stream)) &&
        check_call("vector_add_add_kernel", gpu(StreamSynchronize)(stream))) {
      const auto out = dout.download(n);
      bool ok = true;
      for (int i = 0; i < n; ++i) ok = ok && out[i] == x[i] + y[i];
      report("vector_add n=1000 (extern \"C\" wrapper)", ok);
    }
  }
  silu_mul_fp32(100000, 0, stream);
  silu_mul_fp32(777, 1, stream);
  silu_mul_fp16(50001, stream);
  softmax(781, 1000, 1000, 0, false, stream);  // aligned: specialization 0
  softmax(781, 1000, 1000, 1, false, stream);  // unaligned: specialization 1
  softmax(37, 1000, 1024, 0, true, stream);    // padded rows, extern "C" wrapper
  report("softmax 0 rows: nothing launched, success",
         tilecc::softmax::softmax_kernel(nullptr, nullptr, 1000, 1000, 1000, 0, stream) == gpu(Success));
  matmul_fp16(512, 384, 256, stream);
  matmul_fp16(1008, 1008, 496, stream);  // partial tiles in M, N and K
  // Only sizes that are multiples of 16 were exported: M = 1000 is refused, not miscomputed.
  report("matmul M=1000: refused with InvalidValue",
         matmul_matmul_kernel(nullptr, nullptr, nullptr, 1000, 1008, 496, 496, 1, 1008, 1, 1008, 1,
                              stream) == gpu(ErrorInvalidValue));
  (void)gpu(StreamDestroy)(stream);
  std::printf("%s\n", all_ok ? "PASS" : "FAIL");
  return all_ok ? 0 : 1;
}
