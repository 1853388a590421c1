/* Host kernels of LLVM's convention whose parameters are not all pointer-sized integers,
 * for launches whose arguments are their C parameters (tests/host_c_parameters.rs).
 * Built as C++ (mangled names; clang's DWARF 5 says how classes are passed) and as C
 * (every kernel extern "C": the types come from the debug information alone). */
#ifdef __cplusplus
#define C_LINKAGE extern "C"
#else
#define C_LINKAGE
#endif

struct P {
  float x;
  int n;
};
struct Q {
  double a, b;
};
struct Big {
  long a, b, c;
};
struct Inner {
  float f[3];
  char c;
};
struct Outer {
  struct Inner in;
  short s;
};
enum Colour { RED = 3, GREEN = 5 };

void mixed(int *a, int x, long y, double z) {
  a[0] = x;
  a[1] = (int)(y - 10000000000L);
  a[2] = (int)(z * 4);
}
void floats(float f, double d, long double e, double *out) {
  *out = f + d + (double)e;
}
void structs(struct P p, struct Q q, double *out) { *out = p.x * p.n + q.a - q.b; }
void big(struct Big b, long *out) { *out = b.a + 10 * b.b + 100 * b.c; }
void nested(struct Outer o, double *out) { *out = o.in.f[0] + o.in.f[1] + o.in.f[2] + o.in.c + o.s; }
void colour(enum Colour c, long *out) { *out = c; }
C_LINKAGE void c_linkage(double d, struct P p, double *out) { *out = d + p.x * p.n; }

#ifdef __cplusplus
class Counted {
public:
  long v;
  Counted(long x);
  Counted(const Counted &o);
};
Counted::Counted(long x) : v(x) {}
Counted::Counted(const Counted &o) : v(o.v + 1) {}
void counted(Counted c, long *out) { *out = c.v; }
template <typename T> void axpy(T a, T *x, T *y) { *y = a * *x + *y; }
template void axpy<double>(double, double *, double *);
#endif
