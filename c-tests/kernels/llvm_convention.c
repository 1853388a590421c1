/* Kernels of LLVM's generic-ELF host plugin convention: the argument buffer is an array
   of pointer-sized values, one per argument, and the function is called once for the
   whole launch. */

int calls = 0;

void k(void *a, void *b) {
  long *dst = (long *)a;
  dst[0] = (long)b;
  dst[1] += 1;
  calls += 1;
}

/* Each argument is one pointer-sized slot of the buffer; the caller widens small values. */
void widths(void *out, void *c, void *s, void *i) {
  unsigned long *o = (unsigned long *)out;
  o[0] = (unsigned long)c;
  o[1] = (unsigned long)s;
  o[2] = (unsigned long)i;
}

void nothing(void) {}
