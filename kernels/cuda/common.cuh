// Common definitions shared by every CVL kernel source. The Rust side prepends this text to
// each source before handing it to NVRTC (no #include, so NVRTC needs no header files).
//
// Element storage: INT = long long (64-bit, wrapping), FLOAT = double, BOOL = unsigned char
// holding 0 or 1. Lengths and indices are 64-bit. A segment index per element is unsigned int.
//
// Every kernel uses grid-stride loops with a correct linear thread index, so any grid size
// works for any length. Kernels never write outside their buffers: a bad index is reported
// through the error mailbox `err` (4 long longs: code, value, bound, spare; first error wins).

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char b8;

#define FULL_MASK 0xffffffffu
#define BLOCK 256
#define NWARPS (BLOCK / 32)

// Error codes written into err[0]; the host turns them into traps.
#define ERR_INDEX 1      // err[1] = offending index, err[2] = segment length
#define ERR_DIV_ZERO 2   // integer / or % by zero
#define ERR_NEG_LEN 3    // err[1] = negative segment length
#define ERR_RAND_ZERO 4  // RAND with a zero bound

#define GRID_LOOP(j, n) \
    for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < (n); \
         j += (i64)blockDim.x * gridDim.x)

__device__ __forceinline__ void report_error(i64* err, i64 code, i64 value, i64 bound) {
    if (err == 0) return;
    if (atomicCAS((u64*)err, 0ull, (u64)code) == 0ull) {
        err[1] = value;
        err[2] = bound;
    }
}

// Wrapping 64-bit integer arithmetic (signed overflow is undefined in C++).
__device__ __forceinline__ i64 wadd(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ __forceinline__ i64 wsub(i64 a, i64 b) { return (i64)((u64)a - (u64)b); }
__device__ __forceinline__ i64 wmul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
__device__ __forceinline__ i64 wneg(i64 a) { return (i64)(0ull - (u64)a); }

// Integer / and % (division by zero reported; MIN / -1 wraps) and shifts (count mod 64).
__device__ __forceinline__ i64 idiv(i64 x, i64 y, i64* err) {
    if (y == 0) { report_error(err, ERR_DIV_ZERO, x, 0); return 0; }
    if (y == -1) return wneg(x);  // MIN / -1 wraps to MIN
    return x / y;
}
__device__ __forceinline__ i64 imod(i64 x, i64 y, i64* err) {
    if (y == 0) { report_error(err, ERR_DIV_ZERO, x, 0); return 0; }
    if (y == -1) return 0;
    return x % y;  // sign of the dividend, like C and Rust
}
// Integer / and % inside a superoperator: `p` is the element, `part` the operation's number
// in the superoperator's evaluation order. A division by zero also keeps in err[3] the least
// key INT64_MIN + (p << 16 | part) of the launch (err[3] is otherwise never negative), so
// the host names the operation that failed at the first failing element, whatever order
// the threads ran in.
__device__ __forceinline__ void report_part(i64* err, i64 p, i64 part) {
    if (err == 0 || part > 0xFFFF) return;
    atomicMin(err + 3, (i64)(0x8000000000000000ull | ((u64)p << 16) | (u64)part));
}
__device__ __forceinline__ i64 sdiv(i64 x, i64 y, i64* err, i64 p, i64 part) {
    if (y == 0) report_part(err, p, part);
    return idiv(x, y, err);
}
__device__ __forceinline__ i64 smod(i64 x, i64 y, i64* err, i64 p, i64 part) {
    if (y == 0) report_part(err, p, part);
    return imod(x, y, err);
}
__device__ __forceinline__ i64 ishl(i64 x, i64 y) { return (i64)((u64)x << (y & 63)); }
__device__ __forceinline__ i64 ishr(i64 x, i64 y) { return x >> (y & 63); }

// The float identity of MAX (negated for MIN): 1.0e36 rounded through a C float, as the
// reference serial CVL does.
#define FLOAT_MAX_ID ((double)(-1.0e36f))
#define INT_MIN64 ((i64)0x8000000000000000ll)
#define INT_MAX64 ((i64)0x7fffffffffffffffll)
// The int identities of MAX and MIN as results (never as operands): the reference's 32-bit
// INT_MIN and INT_MAX (vcode's INT_MAX_IDENTITY).
#define INT_MAX_ID32 ((i64)(-2147483647ll - 1))
#define INT_MIN_ID32 ((i64)2147483647ll)
