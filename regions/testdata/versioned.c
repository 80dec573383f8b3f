// A library exporting one function in two versions, as glibc's libm
// exports exp: vf@VER_1 (compat, what programs linked before VER_2 bind
// to) and vf@@VER_2 (the default, what a program linked now binds to).
// Built by the tests: gcc -shared -fPIC versioned.c
// -Wl,--version-script=versioned.map.
__asm__(".symver vf_1, vf@VER_1");
__asm__(".symver vf_2, vf@@VER_2");

__attribute__((noinline)) int vf_1(int x) { return x + 1; }
__attribute__((noinline)) int vf_2(int x) { return x + 2; }
