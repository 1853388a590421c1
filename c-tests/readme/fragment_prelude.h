/* What the README's code fragments may use: the headers and the variables of its first
 * program (examples-c/first.c). check_readme.sh compiles each fragment after this. */
#include <offload/liboffload.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern ol_device_handle_t device, host;
extern ol_queue_handle_t queue;
extern ol_program_handle_t program;
extern ol_symbol_handle_t kernel;
extern float *x;
extern void *ptr;
extern size_t n, size;
struct scale_args { float *x; float a; size_t n; };
extern const unsigned char *image;
extern size_t image_size;
