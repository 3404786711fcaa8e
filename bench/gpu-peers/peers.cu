// Hand-written CUDA peers of the GPU NESL paper's benchmarks (Bergstrom & Reppy, Table 1):
// the same algorithms as bench/programs/*.nesl and their Rust peers (bench/src/peer.rs),
// on inputs drawn from the Rust peers' generator (same seeds, so the same inputs).
//
// Each benchmark builds its input on the host, copies it to the device, runs its core
// once to warm up (and to size every scratch buffer), then times the core R times with
// CUDA events (data on the device before, result left on the device after), and finally
// checks the answer on the host, outside the timed region. One JSON line per benchmark:
//
//   {"program":"dotp","n":10000000,"peer":"cub-reduce","runs":5,"median_s":...,"min_s":...,"ok":true}
//
// Usage: peers [--runs R] [--only name,name] [--n name=N,...]
// Build: nvcc -O3 -std=c++17 -arch=sm_90 --extended-lambda -o peers peers.cu

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

// ----------------------------------------------------------------------------------------
// Error checking, RAII buffers, timing
// ----------------------------------------------------------------------------------------

#define CUDA_CHECK(expr)                                                                      \
  do {                                                                                        \
    cudaError_t err_ = (expr);                                                                \
    if (err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", __FILE__, __LINE__, #expr,        \
                   cudaGetErrorString(err_));                                                 \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

// Checks the launch of the kernel just before it (configuration errors; faults in the
// kernel itself surface at the next synchronising call, which is checked too).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

static unsigned blocks_for(size_t n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}
constexpr unsigned kThreads = 256;

// A device array with unique ownership. Its contents are kept by grow_keep() and dropped
// by grow_discard(); both only ever enlarge it.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { grow_discard(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), cap_(o.cap_) { o.p_ = nullptr; o.cap_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_; cap_ = o.cap_;
      o.p_ = nullptr; o.cap_ = 0;
    }
    return *this;
  }

  T* get() const { return p_; }
  size_t capacity() const { return cap_; }

  void grow_discard(size_t n) {
    if (n <= cap_) return;
    release();
    CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
    cap_ = n;
  }
  void grow_keep(size_t n, size_t used) {
    if (n <= cap_) return;
    T* q = nullptr;
    CUDA_CHECK(cudaMalloc(&q, n * sizeof(T)));
    if (used > 0) CUDA_CHECK(cudaMemcpy(q, p_, used * sizeof(T), cudaMemcpyDeviceToDevice));
    release();
    p_ = q; cap_ = n;
  }
  void upload(const std::vector<T>& h) {
    grow_discard(h.size());
    CUDA_CHECK(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download(size_t n) const {
    std::vector<T> h(n);
    if (n > 0) CUDA_CHECK(cudaMemcpy(h.data(), p_, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  void release() {
    if (p_) CUDA_CHECK(cudaFree(p_));
    p_ = nullptr; cap_ = 0;
  }
  T* p_ = nullptr;
  size_t cap_ = 0;
};

template <class T>
static DeviceBuffer<T> to_device(const std::vector<T>& h) {
  DeviceBuffer<T> d;
  d.upload(h);
  return d;
}

// CUB scratch space: grows to the largest request (in the untimed warm-up run).
class TempStorage {
 public:
  void* get(size_t bytes) {
    buf_.grow_discard(std::max<size_t>(bytes, 1));
    return buf_.get();
  }
 private:
  DeviceBuffer<unsigned char> buf_;
};

// Page-locked host memory for the few counters the multi-pass algorithms read back.
template <class T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t n) { CUDA_CHECK(cudaMallocHost(&p_, n * sizeof(T))); }
  ~PinnedBuffer() { if (p_) CUDA_CHECK(cudaFreeHost(p_)); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  T& operator[](size_t i) { return p_[i]; }
  T* get() { return p_; }
 private:
  T* p_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { CUDA_CHECK(cudaEventDestroy(e_)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
 private:
  cudaEvent_t e_{};
};

struct Timing {
  double median_s = 0, min_s = 0;
};

// Runs `core` once to warm up, then `runs` times between two events on the default
// stream; the core's host-side waits (multi-pass algorithms) are inside the interval.
template <class F>
static Timing time_core(int runs, F&& core) {
  core();
  CUDA_CHECK(cudaDeviceSynchronize());
  Event start, stop;
  std::vector<double> secs;
  for (int r = 0; r < runs; ++r) {
    CUDA_CHECK(cudaEventRecord(start.get()));
    core();
    CUDA_CHECK(cudaEventRecord(stop.get()));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    secs.push_back(ms * 1e-3);
  }
  std::sort(secs.begin(), secs.end());
  size_t k = secs.size();
  Timing t;
  t.min_s = secs.front();
  t.median_s = k % 2 ? secs[k / 2] : 0.5 * (secs[k / 2 - 1] + secs[k / 2]);
  return t;
}

struct Outcome {
  Timing timing;
  bool ok = false;
};

// The Rust peers' generator (bench/src/peer.rs: xorshift64*, seeded through splitmix64),
// so that every peer here sees exactly the Rust peer's input.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    s_ = (z ^ (z >> 31)) | 1;
  }
  uint64_t next_u64() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545F4914F6CDD1Dull;
  }
  // Uniform in [0, 1).
  double next_f64() { return static_cast<double>(next_u64() >> 11) / static_cast<double>(1ull << 53); }
  // Uniform in [0, m).
  uint64_t below(uint64_t m) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * m) >> 64);
  }
 private:
  uint64_t s_;
};

static std::vector<double> uniform(Rng& rng, size_t n, double lo, double width) {
  std::vector<double> v(n);
  for (auto& x : v) x = lo + width * rng.next_f64();
  return v;
}

// ----------------------------------------------------------------------------------------
// dotp: sum of x[i] * y[i] (programs/dotp.nesl), one cub::DeviceReduce::Sum over a
// transform iterator.
// ----------------------------------------------------------------------------------------

struct DotTerm {
  const double* x;
  const double* y;
  __host__ __device__ double operator()(long long i) const { return x[i] * y[i]; }
};

static Outcome bench_dotp(size_t n, int runs) {
  Rng rng(1);
  std::vector<double> xs(n);
  for (size_t i = 0; i < n; ++i) xs[i] = static_cast<double>(i) / 1000.0;
  std::vector<double> ys = uniform(rng, n, 0.0, 1.0);

  DeviceBuffer<double> dx = to_device(xs), dy = to_device(ys), dres(1);
  TempStorage temp;
  auto terms = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                               DotTerm{dx.get(), dy.get()});
  auto core = [&] {
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, terms, dres.get(), static_cast<long long>(n)));
    CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(bytes), bytes, terms, dres.get(), static_cast<long long>(n)));
  };
  Outcome out;
  out.timing = time_core(runs, core);

  // The program's check: a differently associated sum (chunks of 100).
  double res = dres.download(1)[0];
  double check = 0;
  for (size_t c = 0; c < n; c += 100) {
    double s = 0;
    for (size_t i = c; i < std::min(n, c + 100); ++i) s += xs[i] * ys[i];
    check += s;
  }
  out.ok = std::fabs(res - check) <= 1e-9 * std::max(1.0, std::fabs(check));
  return out;
}

// ----------------------------------------------------------------------------------------
// quicksort: the paper compares against a CUDA radix sort; cub::DeviceRadixSort::SortKeys
// over all 64 key bits. Keys as programs/quicksort.nesl draws them: integers in [0, 10^9).
// ----------------------------------------------------------------------------------------

static Outcome bench_sort(size_t n, int runs) {
  Rng rng(3);
  std::vector<int64_t> keys(n);
  for (auto& k : keys) k = static_cast<int64_t>(rng.below(1000000000));

  DeviceBuffer<int64_t> din = to_device(keys), dout(n);
  TempStorage temp;
  auto core = [&] {
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, din.get(), dout.get(), n));
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(bytes), bytes, din.get(), dout.get(), n));
  };
  Outcome out;
  out.timing = time_core(runs, core);

  std::vector<int64_t> got = dout.download(n);
  std::sort(keys.begin(), keys.end());
  out.ok = got == keys;
  return out;
}

// ----------------------------------------------------------------------------------------
// blackscholes: programs/blackscholes.nesl's formula, one thread per option.
// ----------------------------------------------------------------------------------------

__host__ __device__ inline double cnd(double d) {
  double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
  double poly = k * (0.31938153 +
                     k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
  double w = 1.0 - 0.3989422804014327 * exp(-d * d / 2.0) * poly;
  return d < 0.0 ? 1.0 - w : w;
}

__host__ __device__ inline double bs_call(double s, double x, double tm, double r, double v) {
  double sqt = sqrt(tm);
  double d1 = (log(s / x) + (r + v * v / 2.0) * tm) / (v * sqt);
  double d2 = d1 - v * sqt;
  return s * cnd(d1) - x * exp(-r * tm) * cnd(d2);
}

__global__ void blackscholes_kernel(const double* __restrict__ ss, const double* __restrict__ xs,
                                    const double* __restrict__ ts, double* __restrict__ prices,
                                    size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) prices[i] = bs_call(ss[i], xs[i], ts[i], 0.02, 0.30);
}

static Outcome bench_blackscholes(size_t n, int runs) {
  Rng rng(2);
  std::vector<double> ss = uniform(rng, n, 5.0, 25.0);
  std::vector<double> xs = uniform(rng, n, 1.0, 99.0);
  std::vector<double> ts = uniform(rng, n, 0.25, 9.75);

  DeviceBuffer<double> ds = to_device(ss), dx = to_device(xs), dt = to_device(ts), dp(n);
  auto core = [&] {
    blackscholes_kernel<<<blocks_for(n, kThreads), kThreads>>>(ds.get(), dx.get(), dt.get(), dp.get(), n);
    CUDA_CHECK_LAUNCH();
  };
  Outcome out;
  out.timing = time_core(runs, core);

  // The program's check (no-arbitrage bounds on every price), and the host's formula on
  // every 1000th option.
  std::vector<double> p = dp.download(n);
  bool ok = true;
  for (size_t i = 0; i < n && ok; ++i) {
    ok = p[i] >= std::max(0.0, ss[i] - xs[i] * std::exp(-0.02 * ts[i])) - 1e-6 && p[i] <= ss[i] + 1e-9;
    if (ok && i % 1000 == 0) {
      double want = bs_call(ss[i], xs[i], ts[i], 0.02, 0.30);
      ok = std::fabs(p[i] - want) <= 1e-10 * std::max(1.0, std::fabs(want));
    }
  }
  out.ok = ok;
  return out;
}

// ----------------------------------------------------------------------------------------
// quickhull: programs/quickhull.nesl's algorithm, flattened level by level.
//
// The hull so far is a cyclic list of vertices V[0..S); segment j runs from V[j] to
// V[j+1 mod S], and owns the points strictly left of it (cross > 0), stored contiguously
// in segment order with their cross product. One level:
//   1. per segment, the farthest point (first index on ties, as max_index): a
//      cub::DeviceReduce::ReduceByKey over the segment ids with an arg-max;
//   2. the new vertex list: each segment's start, then its farthest point if it has one
//      (an exclusive scan of the "has points" flags gives the positions);
//   3. each point goes to the child segments A->M and/or M->B it lies strictly left of
//      (an exclusive scan of packed (left of A->M, left of M->B) flags, then a scatter that
//      keeps each child's points in their order).
// The first level starts from the one segment L->L holding all points, with M the
// rightmost point, giving L->R and R->L as the program's two hsplit calls. The loop ends
// when no point is left; the vertex list is then the hull, in the program's order.
// ----------------------------------------------------------------------------------------

__host__ __device__ inline double cross(double ox, double oy, double ax, double ay, double bx,
                                        double by) {
  return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox);
}

// Leftmost (min_index of x) and rightmost (max_index of x) points, first index on ties.
struct Extremes {
  double minx; int mini; double maxx; int maxi;
};
struct ExtremesOf {
  const double* x;
  __host__ __device__ Extremes operator()(int i) const { return {x[i], i, x[i], i}; }
};
struct CombineExtremes {
  __host__ __device__ Extremes operator()(const Extremes& a, const Extremes& b) const {
    Extremes r = a;
    if (b.minx < a.minx || (b.minx == a.minx && b.mini < a.mini)) { r.minx = b.minx; r.mini = b.mini; }
    if (b.maxx > a.maxx || (b.maxx == a.maxx && b.maxi < a.maxi)) { r.maxx = b.maxx; r.maxi = b.maxi; }
    return r;
  }
};

// A point's cross product and index, reduced to the largest cross, first index on ties.
struct Farthest {
  int idx; double c;
};
struct FarthestAt {
  const double* c;
  __host__ __device__ Farthest operator()(int i) const { return {i, c[i]}; }
};
struct MaxFarthest {
  __host__ __device__ Farthest operator()(const Farthest& a, const Farthest& b) const {
    return (b.c > a.c || (b.c == a.c && b.idx < a.idx)) ? b : a;
  }
};

// The points still in play, grouped by segment.
struct PointSet {
  DeviceBuffer<double> x, y, c;
  DeviceBuffer<int> seg;
  void reserve(size_t n) { x.grow_discard(n); y.grow_discard(n); c.grow_discard(n); seg.grow_discard(n); }
};

// Per-segment data of one level.
struct Segments {
  DeviceBuffer<int> active, vpos;   // S + 1 entries each (scan input / output)
  DeviceBuffer<double2> a, m, b;    // segment start, farthest point, end
  DeviceBuffer<int> child, start, end;
  DeviceBuffer<int> run_keys;
  DeviceBuffer<Farthest> run_max;
  void reserve(size_t s) {
    active.grow_discard(s + 1); vpos.grow_discard(s + 1);
    a.grow_discard(s); m.grow_discard(s); b.grow_discard(s);
    child.grow_discard(s); start.grow_discard(s); end.grow_discard(s);
    run_keys.grow_discard(s); run_max.grow_discard(s);
  }
};

// First level: V = [L], one segment L->L whose farthest point is R; new V = [L, R].
__global__ void qh_first_level(const double* xs, const double* ys, const Extremes* ext, double2* v_next,
                               double2* seg_a, double2* seg_m, double2* seg_b, int* seg_child,
                               int* vpos) {
  double2 l = make_double2(xs[ext->mini], ys[ext->mini]);
  double2 r = make_double2(xs[ext->maxi], ys[ext->maxi]);
  v_next[0] = l; v_next[1] = r;
  seg_a[0] = l; seg_m[0] = r; seg_b[0] = l;
  seg_child[0] = 0;
  vpos[0] = 0; vpos[1] = 1;
}

// Marks the segments that have points and records their farthest point.
__global__ void qh_mark_runs(const int* num_runs, const int* run_keys, const Farthest* run_max,
                             const double* px, const double* py, int* active, double2* seg_m, int s) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= s || r >= *num_runs) return;
  int j = run_keys[r];
  int i = run_max[r].idx;
  active[j] = 1;
  seg_m[j] = make_double2(px[i], py[i]);
}

// The new vertex list: V[j], then segment j's farthest point if it has one.
__global__ void qh_new_vertices(const double2* v, int s, const int* active, const int* vpos,
                                const double2* seg_m, double2* v_next, double2* seg_a, double2* seg_b,
                                int* seg_child) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= s) return;
  int at = j + vpos[j];
  v_next[at] = v[j];
  if (active[j]) v_next[at + 1] = seg_m[j];
  seg_a[j] = v[j];
  seg_b[j] = v[(j + 1) % s];
  seg_child[j] = at;
}

// Packs (left of A->M) into the low and (left of M->B) into the high 32 bits, and notes
// where each segment's points start and end. seg == nullptr: every point in segment 0.
__global__ void qh_flags(const double* px, const double* py, const int* seg, int m,
                         const double2* seg_a, const double2* seg_m, const double2* seg_b,
                         uint64_t* flags, int* seg_start, int* seg_end) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) flags[m] = 0;
  if (i >= m) return;
  int k = seg ? seg[i] : 0;
  double x = px[i], y = py[i];
  double2 a = seg_a[k], mm = seg_m[k], b = seg_b[k];
  uint64_t f0 = cross(x, y, a.x, a.y, mm.x, mm.y) > 0.0;
  uint64_t f1 = cross(x, y, mm.x, mm.y, b.x, b.y) > 0.0;
  flags[i] = f0 | (f1 << 32);
  if (i == 0 || (seg && seg[i - 1] != k)) seg_start[k] = i;
  if (i == m - 1 || (seg && seg[i + 1] != k)) seg_end[k] = i + 1;
}

// Moves each point to its child segment(s). With s0/s1 the exclusive scans of the two
// flags, segment k's children come in the order (k, A->M), (k, M->B), so a point left of
// A->M goes to s0[i] + s1[start_k] and one left of M->B to s0[end_k] + s1[i].
__global__ void qh_scatter(const double* px, const double* py, const int* seg, int m,
                           const double2* seg_a, const double2* seg_m, const double2* seg_b,
                           const int* seg_child, const int* seg_start, const int* seg_end,
                           const uint64_t* scan, double* qx, double* qy, double* qc, int* qseg) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  int k = seg ? seg[i] : 0;
  double x = px[i], y = py[i];
  double2 a = seg_a[k], mm = seg_m[k], b = seg_b[k];
  double c0 = cross(x, y, a.x, a.y, mm.x, mm.y);
  double c1 = cross(x, y, mm.x, mm.y, b.x, b.y);
  uint64_t si = scan[i];
  auto lo = [](uint64_t v) { return static_cast<int>(v & 0xffffffffu); };
  auto hi = [](uint64_t v) { return static_cast<int>(v >> 32); };
  if (c0 > 0.0) {
    int at = lo(si) + hi(scan[seg_start[k]]);
    qx[at] = x; qy[at] = y; qc[at] = c0; qseg[at] = seg_child[k];
  }
  if (c1 > 0.0) {
    int at = lo(scan[seg_end[k]]) + hi(si);
    qx[at] = x; qy[at] = y; qc[at] = c1; qseg[at] = seg_child[k] + 1;
  }
}

class Quickhull {
 public:
  Quickhull(const double* xs, const double* ys, int n)
      : xs_(xs), ys_(ys), n_(n), survivors_(1), new_vertices_(1) {}

  // Runs the whole algorithm; the hull is left in vertices() (hull_size() of them).
  void run() {
    levels_ = 0;
    size_t bytes = 0;
    auto ext_in = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), ExtremesOf{xs_});
    const Extremes init{std::numeric_limits<double>::infinity(), INT_MAX,
                        -std::numeric_limits<double>::infinity(), INT_MAX};
    ext_.grow_discard(1);
    CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, ext_in, ext_.get(), n_, CombineExtremes{}, init));
    CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.get(bytes), bytes, ext_in, ext_.get(), n_, CombineExtremes{}, init));

    int s = 1, m = n_;
    const double *px = xs_, *py = ys_, *pc = nullptr;
    const int* pseg = nullptr;
    int cur = 0;  // points_[cur] is the next level's destination
    bool first = true;
    num_runs_.grow_discard(1);
    while (m > 0) {
      segs_.reserve(s);
      v_[1 - vcur_].grow_discard(2 * static_cast<size_t>(s));
      double2* v_next = v_[1 - vcur_].get();
      if (first) {
        qh_first_level<<<1, 1>>>(xs_, ys_, ext_.get(), v_next, segs_.a.get(), segs_.m.get(), segs_.b.get(),
                                 segs_.child.get(), segs_.vpos.get());
        CUDA_CHECK_LAUNCH();
      } else {
        farthest_per_segment(pseg, pc, m);
        CUDA_CHECK(cudaMemsetAsync(segs_.active.get(), 0, (s + 1) * sizeof(int)));
        qh_mark_runs<<<blocks_for(s, kThreads), kThreads>>>(num_runs_.get(), segs_.run_keys.get(),
                                                             segs_.run_max.get(), px, py, segs_.active.get(),
                                                             segs_.m.get(), s);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, segs_.active.get(), segs_.vpos.get(), s + 1));
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(bytes), bytes, segs_.active.get(), segs_.vpos.get(), s + 1));
        qh_new_vertices<<<blocks_for(s, kThreads), kThreads>>>(v_[vcur_].get(), s, segs_.active.get(),
                                                                segs_.vpos.get(), segs_.m.get(), v_next,
                                                                segs_.a.get(), segs_.b.get(), segs_.child.get());
        CUDA_CHECK_LAUNCH();
      }
      flags_.grow_discard(m + 1);
      scan_.grow_discard(m + 1);
      qh_flags<<<blocks_for(m, kThreads), kThreads>>>(px, py, pseg, m, segs_.a.get(), segs_.m.get(), segs_.b.get(),
                                                     flags_.get(), segs_.start.get(), segs_.end.get());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, flags_.get(), scan_.get(), m + 1));
      CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(bytes), bytes, flags_.get(), scan_.get(), m + 1));

      // One wait per level: the number of surviving points and of new vertices.
      CUDA_CHECK(cudaMemcpyAsync(survivors_.get(), scan_.get() + m, sizeof(uint64_t), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpyAsync(new_vertices_.get(), segs_.vpos.get() + s, sizeof(int), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaStreamSynchronize(0));
      uint64_t packed = survivors_[0];
      int new_m = static_cast<int>(packed & 0xffffffffu) + static_cast<int>(packed >> 32);
      int new_s = s + new_vertices_[0];

      PointSet& dst = points_[cur];
      dst.reserve(std::max(new_m, 1));
      if (new_m > 0) {
        qh_scatter<<<blocks_for(m, kThreads), kThreads>>>(px, py, pseg, m, segs_.a.get(), segs_.m.get(),
                                                         segs_.b.get(), segs_.child.get(), segs_.start.get(),
                                                         segs_.end.get(), scan_.get(), dst.x.get(), dst.y.get(),
                                                         dst.c.get(), dst.seg.get());
        CUDA_CHECK_LAUNCH();
      }
      px = dst.x.get(); py = dst.y.get(); pc = dst.c.get(); pseg = dst.seg.get();
      cur = 1 - cur;
      vcur_ = 1 - vcur_;
      m = new_m;
      s = new_s;
      first = false;
      ++levels_;
    }
    hull_size_ = s;
  }

  std::vector<double2> hull() const { return v_[vcur_].download(hull_size_); }
  int levels_last_run() const { return levels_; }

 private:
  void farthest_per_segment(const int* pseg, const double* pc, int m) {
    auto vals = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), FarthestAt{pc});
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, pseg, segs_.run_keys.get(), vals,
                                              segs_.run_max.get(), num_runs_.get(), MaxFarthest{}, m));
    CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp_.get(bytes), bytes, pseg, segs_.run_keys.get(), vals,
                                              segs_.run_max.get(), num_runs_.get(), MaxFarthest{}, m));
  }

  const double* xs_;
  const double* ys_;
  int n_;
  DeviceBuffer<Extremes> ext_;
  DeviceBuffer<int> num_runs_;
  PointSet points_[2];
  Segments segs_;
  DeviceBuffer<double2> v_[2];
  int vcur_ = 0;
  DeviceBuffer<uint64_t> flags_, scan_;
  TempStorage temp_;
  PinnedBuffer<uint64_t> survivors_;  // packed counts of the two child sides
  PinnedBuffer<int> new_vertices_;
  int hull_size_ = 0;
  int levels_ = 0;
};

using Pt = std::pair<double, double>;

static double cross_pts(const Pt& o, const Pt& a, const Pt& b) {
  return cross(o.first, o.second, a.first, a.second, b.first, b.second);
}

// Andrew's monotone chain, without collinear points (as quickhull, which keeps only
// points strictly outside a split line).
static std::vector<Pt> monotone_chain(std::vector<Pt> pts) {
  std::sort(pts.begin(), pts.end());
  pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
  if (pts.size() < 3) return pts;
  std::vector<Pt> h(2 * pts.size());
  size_t k = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    while (k >= 2 && cross_pts(h[k - 2], h[k - 1], pts[i]) <= 0) --k;
    h[k++] = pts[i];
  }
  for (size_t i = pts.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross_pts(h[k - 2], h[k - 1], pts[i]) <= 0) --k;
    h[k++] = pts[i];
  }
  h.resize(k - 1);
  return h;
}

// The program's check (at least 3 vertices turning one way), and the same cyclic vertex
// sequence, in either direction, as the monotone chain's.
static bool hull_matches(const std::vector<Pt>& hull, const std::vector<Pt>& ref) {
  size_t m = hull.size();
  if (m < 3 || m != ref.size()) return false;
  bool all_le = true, all_ge = true;
  for (size_t i = 0; i < m; ++i) {
    double t = cross_pts(hull[i], hull[(i + 1) % m], hull[(i + 2) % m]);
    all_le = all_le && t <= 0.0;
    all_ge = all_ge && t >= 0.0;
  }
  if (!all_le && !all_ge) return false;
  size_t at = std::find(hull.begin(), hull.end(), ref[0]) - hull.begin();
  if (at == m) return false;
  bool fwd = true, bwd = true;
  for (size_t i = 0; i < m; ++i) {
    fwd = fwd && hull[(at + i) % m] == ref[i];
    bwd = bwd && hull[(at + m - i) % m] == ref[i];
  }
  return fwd || bwd;
}

static Outcome bench_quickhull(size_t n, int runs) {
  Rng rng(4);
  std::vector<double> xs = uniform(rng, n, 0.0, 1.0);
  std::vector<double> ys = uniform(rng, n, 0.0, 1.0);

  DeviceBuffer<double> dx = to_device(xs), dy = to_device(ys);
  Quickhull qh(dx.get(), dy.get(), static_cast<int>(n));
  Outcome out;
  out.timing = time_core(runs, [&] { qh.run(); });

  std::vector<Pt> hull;
  for (const double2& v : qh.hull()) hull.emplace_back(v.x, v.y);
  std::vector<Pt> pts(n);
  for (size_t i = 0; i < n; ++i) pts[i] = {xs[i], ys[i]};
  std::vector<Pt> ref = monotone_chain(std::move(pts));
  out.ok = hull_matches(hull, ref);
  std::fprintf(stderr, "quickhull: %zu hull vertices (monotone chain: %zu), %d levels\n", hull.size(),
               ref.size(), qh.levels_last_run());
  return out;
}

// ----------------------------------------------------------------------------------------
// barneshut: one force step over programs/barneshut.nesl's implicit quadtree of the unit
// square (a cell of one body, or of side under 1e-9, is a leaf; otherwise its four
// quadrants, a body on a dividing line going right / up), with the program's opening
// criterion distance^2 > 2 size^2, built and walked on the device:
//   1. each body's cell path: a 60-bit Morton code of its coordinates quantised to 30 bits
//      (bit 29 - d of floor(x * 2^30) is exactly the test x >= cx at depth d, since every
//      cell centre is a dyadic rational; depth 30, side 2^-30 < 1e-9, is always a leaf);
//   2. bodies sorted by code (cub radix sort), so every cell is a contiguous range;
//   3. the tree, level by level: each inner cell of a level finds its quadrants' ranges
//      by binary search and allocates their nodes in the next level;
//   4. each node's mass and mass-weighted position sums: one segmented reduction;
//   5. one thread per body (in Morton order) walks the tree depth first with an explicit
//      stack, quadrants in the program's order, summing the pulls.
// Bodies are assumed to lie in the unit square [0, 1)^2, as the program's are.
// ----------------------------------------------------------------------------------------

constexpr int kMaxDepth = 30;  // 2^-30 < 1e-9 <= 2^-29
constexpr int kStack = 4 * (kMaxDepth + 1);

struct Node {
  int beg, end;   // bodies [beg, end) in Morton order
  int depth;      // side 2^-depth
  int leaf;
  int child[4];   // quadrants (-x-y, +x-y, -x+y, +x+y); -1 where empty
};
struct Sums {
  double m, mx, my;
};
struct AddSums {
  __host__ __device__ Sums operator()(const Sums& a, const Sums& b) const {
    return {a.m + b.m, a.mx + b.mx, a.my + b.my};
  }
};
struct BodySums {
  const double *x, *y, *m;
  __host__ __device__ Sums operator()(int i) const { return {m[i], x[i] * m[i], y[i] * m[i]}; }
};
struct NodeBeg {
  const Node* nodes;
  __host__ __device__ int operator()(int i) const { return nodes[i].beg; }
};
struct NodeEnd {
  const Node* nodes;
  __host__ __device__ int operator()(int i) const { return nodes[i].end; }
};

__host__ __device__ inline void pull(double x, double y, double gx, double gy, double m, double& fx,
                                     double& fy) {
  double dx = gx - x, dy = gy - y;
  double r2 = dx * dx + dy * dy + 1.0e-6;
  double fm = m / (r2 * sqrt(r2));
  fx += fm * dx;
  fy += fm * dy;
}

__device__ inline uint64_t spread_bits(uint32_t v) {  // 30 bits -> the even bits of 60
  uint64_t x = v & 0x3fffffffu;
  x = (x | (x << 16)) & 0x0000ffff0000ffffull;
  x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
  x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

__device__ inline uint32_t quantise(double v) {
  double q = floor(v * 1073741824.0);  // exact: a power-of-two scaling
  return static_cast<uint32_t>(fmin(fmax(q, 0.0), 1073741823.0));
}

// Quadrant digit at depth d: x bit + 2 * y bit, as the program orders its quadrants.
__global__ void bh_codes(const double* x, const double* y, int n, uint64_t* codes, int* idx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  codes[i] = spread_bits(quantise(x[i])) | (spread_bits(quantise(y[i])) << 1);
  idx[i] = i;
}

__global__ void bh_gather(const int* idx, const double* x, const double* y, const double* m, int n,
                          double* sx, double* sy, double* sm) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int i = idx[t];
  sx[t] = x[i]; sy[t] = y[i]; sm[t] = m[i];
}

__global__ void bh_root(Node* nodes, int n, int* node_count) {
  nodes[0] = Node{0, n, 0, 0, {-1, -1, -1, -1}};
  *node_count = 1;
}

// Splits the nodes [lo, hi) of depth d into their non-empty quadrants.
__global__ void bh_split(Node* nodes, int lo, int hi, int d, const uint64_t* codes, int* node_count) {
  int i = lo + blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= hi) return;
  Node nd = nodes[i];
  if (nd.end - nd.beg == 1 || ldexp(1.0, -d) < 1.0e-9) {
    nodes[i].leaf = 1;
    return;
  }
  int shift = 2 * (kMaxDepth - 1 - d);
  int bound[5];
  bound[0] = nd.beg;
  bound[4] = nd.end;
  for (int q = 1; q < 4; ++q) {  // first body whose digit is >= q
    int a = bound[q - 1], b = nd.end;
    while (a < b) {
      int mid = (a + b) / 2;
      if (static_cast<int>((codes[mid] >> shift) & 3) < q) a = mid + 1; else b = mid;
    }
    bound[q] = a;
  }
  int nonempty = 0;
  for (int q = 0; q < 4; ++q) nonempty += bound[q + 1] > bound[q];
  int slot = atomicAdd(node_count, nonempty);
  for (int q = 0; q < 4; ++q) {
    if (bound[q + 1] > bound[q]) {
      nodes[slot] = Node{bound[q], bound[q + 1], d + 1, 0, {-1, -1, -1, -1}};
      nd.child[q] = slot++;
    }
  }
  for (int q = 0; q < 4; ++q) nodes[i].child[q] = nd.child[q];
}

// Turns the sums into centres of mass (gx = sum(x m) / m, as the program).
__global__ void bh_centres(Sums* sums, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Sums s = sums[i];
  sums[i] = {s.m, s.mx / s.m, s.my / s.m};
}

__global__ void bh_forces(const Node* __restrict__ nodes, const Sums* __restrict__ centres,
                          const double* __restrict__ sx, const double* __restrict__ sy,
                          const double* __restrict__ sm, const int* __restrict__ idx, int n,
                          double* __restrict__ fx, double* __restrict__ fy) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double x = sx[t], y = sy[t], ax = 0.0, ay = 0.0;
  int stack[kStack];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    int i = stack[--sp];
    const Node& nd = nodes[i];
    if (nd.leaf) {
      for (int b = nd.beg; b < nd.end; ++b) pull(x, y, sx[b], sy[b], sm[b], ax, ay);
      continue;
    }
    Sums g = centres[i];
    double size = ldexp(1.0, -nd.depth);
    if ((x - g.mx) * (x - g.mx) + (y - g.my) * (y - g.my) > 2.0 * size * size) {
      pull(x, y, g.mx, g.my, g.m, ax, ay);
    } else {
      for (int q = 3; q >= 0; --q)  // popped in quadrant order
        if (nd.child[q] >= 0) stack[sp++] = nd.child[q];
    }
  }
  int i = idx[t];
  fx[i] = ax;
  fy[i] = ay;
}

class BarnesHut {
 public:
  BarnesHut(const double* x, const double* y, const double* m, int n)
      : x_(x), y_(y), m_(m), n_(n), codes_in_(n), codes_(n), idx_in_(n), idx_(n), sx_(n), sy_(n),
        sm_(n), fx_(n), fy_(n), node_count_(1), host_count_(1) {
    nodes_.grow_discard(2 * static_cast<size_t>(n) + 1);
  }

  void run() {
    const unsigned nb = blocks_for(n_, kThreads);
    bh_codes<<<nb, kThreads>>>(x_, y_, n_, codes_in_.get(), idx_in_.get());
    CUDA_CHECK_LAUNCH();
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, codes_in_.get(), codes_.get(), idx_in_.get(),
                                               idx_.get(), n_, 0, 2 * kMaxDepth));
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.get(bytes), bytes, codes_in_.get(), codes_.get(),
                                               idx_in_.get(), idx_.get(), n_, 0, 2 * kMaxDepth));
    bh_gather<<<nb, kThreads>>>(idx_.get(), x_, y_, m_, n_, sx_.get(), sy_.get(), sm_.get());
    CUDA_CHECK_LAUNCH();

    // The tree, one level per pass; one wait per level for the next level's size.
    bh_root<<<1, 1>>>(nodes_.get(), n_, node_count_.get());
    CUDA_CHECK_LAUNCH();
    int lo = 0, hi = 1;
    for (int d = 0; hi > lo; ++d) {
      nodes_.grow_keep(hi + 4 * static_cast<size_t>(hi - lo), hi);
      bh_split<<<blocks_for(hi - lo, kThreads), kThreads>>>(nodes_.get(), lo, hi, d, codes_.get(),
                                                            node_count_.get());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaMemcpyAsync(host_count_.get(), node_count_.get(), sizeof(int), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaStreamSynchronize(0));
      lo = hi;
      hi = host_count_[0];
    }
    nodes_total_ = hi;

    centres_.grow_discard(nodes_total_);
    auto body_sums = thrust::make_transform_iterator(thrust::counting_iterator<int>(0),
                                                     BodySums{sx_.get(), sy_.get(), sm_.get()});
    auto begs = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), NodeBeg{nodes_.get()});
    auto ends = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), NodeEnd{nodes_.get()});
    const Sums zero{0.0, 0.0, 0.0};
    CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(nullptr, bytes, body_sums, centres_.get(), nodes_total_, begs,
                                                  ends, AddSums{}, zero));
    CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(temp_.get(bytes), bytes, body_sums, centres_.get(),
                                                  nodes_total_, begs, ends, AddSums{}, zero));
    bh_centres<<<blocks_for(nodes_total_, kThreads), kThreads>>>(centres_.get(), nodes_total_);
    CUDA_CHECK_LAUNCH();

    bh_forces<<<nb, kThreads>>>(nodes_.get(), centres_.get(), sx_.get(), sy_.get(), sm_.get(), idx_.get(), n_,
                                fx_.get(), fy_.get());
    CUDA_CHECK_LAUNCH();
  }

  std::vector<double> fx() const { return fx_.download(n_); }
  std::vector<double> fy() const { return fy_.download(n_); }
  int nodes() const { return nodes_total_; }

 private:
  const double *x_, *y_, *m_;
  int n_;
  DeviceBuffer<uint64_t> codes_in_, codes_;
  DeviceBuffer<int> idx_in_, idx_;
  DeviceBuffer<double> sx_, sy_, sm_, fx_, fy_;
  DeviceBuffer<Node> nodes_;
  DeviceBuffer<Sums> centres_;
  DeviceBuffer<int> node_count_;
  PinnedBuffer<int> host_count_;
  TempStorage temp_;
  int nodes_total_ = 0;
};

struct Bodies {
  std::vector<double> x, y, m;
};

// The program's bh() for one target, as written (the cell's bodies filtered into its
// quadrants on the way down): the reference for the device's tree walk. `mag` sums the
// magnitudes of the pulls, a scale for the rounding error of their sum.
static void host_bh(const Bodies& B, const std::vector<int>& ids, double cx, double cy, double size,
                    double x, double y, double& fx, double& fy, double& mag) {
  auto add = [&](double gx, double gy, double m) {
    double px = 0, py = 0;
    pull(x, y, gx, gy, m, px, py);
    fx += px; fy += py; mag += std::hypot(px, py);
  };
  if (ids.empty()) return;
  if (ids.size() == 1 || size < 1.0e-9) {
    for (int i : ids) add(B.x[i], B.y[i], B.m[i]);
    return;
  }
  double m = 0, mx = 0, my = 0;
  for (int i : ids) { m += B.m[i]; mx += B.x[i] * B.m[i]; my += B.y[i] * B.m[i]; }
  double gx = mx / m, gy = my / m;
  if ((x - gx) * (x - gx) + (y - gy) * (y - gy) > 2.0 * size * size) {
    add(gx, gy, m);
    return;
  }
  double h = size / 2.0;
  const double qc[4][2] = {{cx - h / 2.0, cy - h / 2.0}, {cx + h / 2.0, cy - h / 2.0},
                           {cx - h / 2.0, cy + h / 2.0}, {cx + h / 2.0, cy + h / 2.0}};
  for (const auto& q : qc) {
    std::vector<int> sub;
    for (int i : ids)
      if ((q[0] > cx ? B.x[i] >= cx : B.x[i] < cx) && (q[1] > cy ? B.y[i] >= cy : B.y[i] < cy)) sub.push_back(i);
    host_bh(B, sub, q[0], q[1], h, x, y, fx, fy, mag);
  }
}

static Outcome bench_barneshut(size_t n, int runs) {
  Rng rng(5);
  Bodies B;
  B.x = uniform(rng, n, 0.0, 1.0);
  B.y = uniform(rng, n, 0.0, 1.0);
  B.m = uniform(rng, n, 0.5, 1.0);

  DeviceBuffer<double> dx = to_device(B.x), dy = to_device(B.y), dm = to_device(B.m);
  BarnesHut bh(dx.get(), dy.get(), dm.get(), static_cast<int>(n));
  Outcome out;
  out.timing = time_core(runs, [&] { bh.run(); });

  std::vector<double> fx = bh.fx(), fy = bh.fy();
  bool ok = std::all_of(fx.begin(), fx.end(), [](double v) { return std::isfinite(v); }) &&
            std::all_of(fy.begin(), fy.end(), [](double v) { return std::isfinite(v); });

  // The program's check: the first 16 bodies' forces, as one vector, within 5% of the
  // direct O(n^2) sum's.
  size_t k = std::min<size_t>(16, n);
  double err2 = 0, norm2 = 0;
  for (size_t t = 0; t < k; ++t) {
    double dxs = 0, dys = 0;
    for (size_t j = 0; j < n; ++j) pull(B.x[t], B.y[t], B.x[j], B.y[j], B.m[j], dxs, dys);
    err2 += (fx[t] - dxs) * (fx[t] - dxs) + (fy[t] - dys) * (fy[t] - dys);
    norm2 += dxs * dxs + dys * dys;
  }
  bool direct_ok = std::sqrt(err2) <= 0.05 * std::sqrt(norm2) + 1e-9;

  // The same tree walk on the host, for 64 bodies spread over the input: equal up to
  // the rounding of the sums.
  std::vector<int> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = static_cast<int>(i);
  double worst = 0;
  for (size_t s = 0; s < 64 && s < n; ++s) {
    size_t t = s * (n / 64);
    double hx = 0, hy = 0, mag = 0;
    host_bh(B, all, 0.5, 0.5, 1.0, B.x[t], B.y[t], hx, hy, mag);
    worst = std::max(worst, std::hypot(fx[t] - hx, fy[t] - hy) / std::max(mag, 1e-300));
  }
  bool walk_ok = worst <= 1e-10;
  std::fprintf(stderr, "barneshut: %d nodes; first %zu bodies vs direct sum: error %.3g of %.3g; "
               "64 bodies vs host walk: worst error %.3g of the pulls' magnitude\n",
               bh.nodes(), k, std::sqrt(err2), std::sqrt(norm2), worst);
  out.ok = ok && direct_ok && walk_ok;
  return out;
}

// ----------------------------------------------------------------------------------------
// Driver
// ----------------------------------------------------------------------------------------

struct Benchmark {
  const char* program;
  const char* peer;
  size_t default_n;
  Outcome (*run)(size_t n, int runs);
};

static const Benchmark kBenchmarks[] = {
    {"dotp", "cub-reduce", 10000000, bench_dotp},
    {"quicksort", "cub-radix-sort", 1000000, bench_sort},
    {"blackscholes", "cuda-kernel", 10000000, bench_blackscholes},
    {"quickhull", "cuda-segmented-quickhull", 5000000, bench_quickhull},
    {"barneshut", "cuda-quadtree-walk", 75000, bench_barneshut},
};

static std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t next = s.find(sep, at);
    if (next == std::string::npos) next = s.size();
    if (next > at) out.push_back(s.substr(at, next - at));
    at = next + 1;
  }
  return out;
}

[[noreturn]] static void usage(const char* why) {
  std::fprintf(stderr, "%s\nusage: peers [--runs R] [--only name,name] [--n name=N,...]\nprograms:", why);
  for (const auto& b : kBenchmarks) std::fprintf(stderr, " %s", b.program);
  std::fprintf(stderr, "\n");
  std::exit(64);
}

static const Benchmark* find_benchmark(const std::string& name) {
  for (const auto& b : kBenchmarks)
    if (name == b.program) return &b;
  return nullptr;
}

static long long parse_positive(const std::string& s, const char* what) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v <= 0) usage((std::string("bad ") + what + ": " + s).c_str());
  return v;
}

int main(int argc, char** argv) {
  int runs = 5;
  std::vector<std::string> only;
  std::map<std::string, size_t> sizes;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if ((arg == "--runs" || arg == "--only" || arg == "--n") && a + 1 >= argc) usage(("missing value for " + arg).c_str());
    if (arg == "--runs") {
      runs = static_cast<int>(parse_positive(argv[++a], "--runs"));
    } else if (arg == "--only") {
      for (const auto& name : split(argv[++a], ',')) {
        if (!find_benchmark(name)) usage(("unknown program: " + name).c_str());
        only.push_back(name);
      }
    } else if (arg == "--n") {
      for (const auto& kv : split(argv[++a], ',')) {
        size_t eq = kv.find('=');
        if (eq == std::string::npos) usage(("expected name=N: " + kv).c_str());
        std::string name = kv.substr(0, eq);
        if (!find_benchmark(name)) usage(("unknown program: " + name).c_str());
        sizes[name] = static_cast<size_t>(parse_positive(kv.substr(eq + 1), "size"));
      }
    } else {
      usage(("unknown argument: " + arg).c_str());
    }
  }

  bool all_ok = true;
  for (const auto& b : kBenchmarks) {
    if (!only.empty() && std::find(only.begin(), only.end(), b.program) == only.end()) continue;
    size_t n = sizes.count(b.program) ? sizes[b.program] : b.default_n;
    Outcome o = b.run(n, runs);
    all_ok = all_ok && o.ok;
    std::printf("{\"program\":\"%s\",\"n\":%zu,\"peer\":\"%s\",\"runs\":%d,\"median_s\":%.6e,\"min_s\":%.6e,\"ok\":%s}\n",
                b.program, n, b.peer, runs, o.timing.median_s, o.timing.min_s, o.ok ? "true" : "false");
    std::fflush(stdout);
  }
  return all_ok ? 0 : 1;
}
