/* A 3D grid: every work-item writes its global ids, its group's linear id, the launch's
 * dimensions and whether its dynamic shared memory is 64-byte aligned; every cell is
 * checked. Then the same kernel as a 2D and a 1D launch. On the device OFFLOAD_TEST_DEVICE
 * names (kernel_test.h). A GPU kernel cannot read the launch's Dimensions and derives
 * them from the extents above 1 (offload/host_kernel.h): every grid here uses its last
 * dimension, so both answers agree. */
#include "kernel_test.h"
#include "kernels/host_abi.h"

static ol_device_handle_t host; /* names the host side of copies */

static void run_grid(ol_device_handle_t device, ol_symbol_handle_t kernel, size_t dims,
                     ol_dimensions_t groups, ol_dimensions_t size, size_t shared) {
  const size_t sx = (size_t)groups.x * size.x, sy = (size_t)groups.y * size.y,
               sz = (size_t)groups.z * size.z, cells = sx * sy * sz;
  void *d_out = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, cells * sizeof(struct ids), &d_out));
  const unsigned char fill = 0xFF;
  CHECK_OK(olMemFill(NULL, d_out, 1, &fill, cells * sizeof(struct ids)));
  ol_kernel_launch_size_args_t grid = {dims, groups, size, shared};
  const struct grid3d_args args = {d_out};
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  CHECK_OK(olLaunchKernel(queue, device, kernel, &args, sizeof args, &grid));
  struct ids *out = malloc(cells * sizeof *out);
  REQUIRE(out != NULL);
  CHECK_OK(olMemcpy(queue, out, host, d_out, device, cells * sizeof *out));
  CHECK_OK(olSyncQueue(queue));
  CHECK_OK(olDestroyQueue(queue));

  size_t wrong = 0;
  for (size_t z = 0; z < sz; ++z)
    for (size_t y = 0; y < sy; ++y)
      for (size_t x = 0; x < sx; ++x) {
        const struct ids *r = &out[(z * sy + y) * sx + x];
        const size_t group = ((z / size.z) * groups.y + y / size.y) * groups.x + x / size.x;
        if ((r->gx != x || r->gy != y || r->gz != z || r->group_linear != group ||
             r->dims != dims || r->aligned != 1) &&
            wrong++ < 5)
          fprintf(stderr,
                  "%zuD cell (%zu,%zu,%zu): ids (%u,%u,%u) group %u dims %u aligned %u, "
                  "want group %zu\n",
                  dims, x, y, z, r->gx, r->gy, r->gz, r->group_linear, r->dims, r->aligned,
                  group);
      }
  CHECK_EQ(wrong, 0);
  free(out);
  CHECK_OK(olMemFree(d_out));
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device();
  host = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t grid3d = get_kernel(program, "grid3d");

  run_grid(device, grid3d, 3, (ol_dimensions_t){5, 3, 4}, (ol_dimensions_t){4, 6, 2}, 0);
  run_grid(device, grid3d, 3, (ol_dimensions_t){7, 2, 3}, (ol_dimensions_t){3, 5, 4}, 100);
  run_grid(device, grid3d, 3, (ol_dimensions_t){1, 1, 64}, (ol_dimensions_t){1, 1, 1}, 0);
  run_grid(device, grid3d, 2, (ol_dimensions_t){9, 11, 1}, (ol_dimensions_t){8, 4, 1}, 64);
  run_grid(device, grid3d, 1, (ol_dimensions_t){37, 1, 1}, (ol_dimensions_t){13, 1, 1}, 0);

  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_kernel_grid3d");
}
