// Virtual calls inside target regions on objects mapped from the host. clang compiles
// them for the CPU target as calls through the object's vtable pointer, the host's: on
// the host device that is the program's own vtable; on a remote device the server maps
// the program's code and vtables at the same addresses, so the calls land the same way.
// Also a function pointer held in a mapped struct, called on the device.
#include <cstdio>

#pragma omp declare target
struct Shape {
  virtual ~Shape() {}
  virtual int sides() const { return 0; }
  virtual double area(double unit) const { return 0.0 * unit; }
};

struct Square : Shape {
  int sides() const override { return 4; }
  double area(double unit) const override { return unit * unit; }
};

struct Named {
  virtual ~Named() {}
  virtual char initial() const { return '?'; }
};

// Two bases: the second base's vtable pointer sits inside the object, at an offset.
struct Tile : Square, Named {
  char initial() const override { return 'T'; }
  int sides() const override { return 40; }
};

int twice(int x) { return 2 * x; }
int thrice(int x) { return 3 * x; }
#pragma omp end declare target

struct Operation {
  int (*apply)(int);
  int operand;
};

static int results_of(const Shape &shape, const Named &named, int out[3]) {
  int sides = 0, initial = 0;
  double area = 0;
#pragma omp target map(from : sides, initial, area)
  {
    sides = shape.sides();
    area = shape.area(3.0);
    initial = named.initial();
  }
  out[0] = sides;
  out[1] = (int)area;
  out[2] = initial;
  return 0;
}

int main() {
  Shape shape;
  Square square;
  Tile tile;
  Named named;
  int got[3];

#pragma omp target data map(to : shape, square, tile, named)
  {
    results_of(shape, named, got);
    std::printf("base: %d sides, area %d, initial %c\n", got[0], got[1], got[2]);
    results_of(square, named, got);
    std::printf("derived: %d sides, area %d, initial %c\n", got[0], got[1], got[2]);
    results_of(tile, tile, got);
    std::printf("two bases: %d sides, area %d, initial %c\n", got[0], got[1], got[2]);

    Shape *through_pointer = &tile;
    int sides = 0;
#pragma omp target map(from : sides)
    sides = through_pointer->sides();
    std::printf("through a base pointer: %d sides\n", sides);
  }

  Operation ops[2] = {{twice, 21}, {thrice, 5}};
  int applied[2] = {0, 0};
#pragma omp target map(to : ops[0 : 2]) map(from : applied[0 : 2])
  for (int i = 0; i < 2; ++i)
    applied[i] = ops[i].apply(ops[i].operand);
  std::printf("function pointers in a mapped struct: %d %d\n", applied[0], applied[1]);
  return 0;
}
