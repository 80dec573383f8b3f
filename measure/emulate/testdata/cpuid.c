/* Prints the CPU identity CPUID gives (vendor, family, model, stepping,
 * AVX2, AVX-512F); with an argument, execs itself without one first (by
 * argv[0], a path, or with "self" by /proc/self/exe), so a test sees what
 * a followed exec is presented. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned a, b, c, d, a7, b7, c7, d7;
	char vendor[13];
	if (argc > 1) {
		execl(strcmp(argv[1], "self") == 0 ? "/proc/self/exe" : argv[0], argv[0], (char *)0);
		return 1;
	}
	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	__cpuid(1, a, b, c, d);
	unsigned family = (a >> 8) & 15, model = (a >> 4) & 15;
	if (family == 15)
		family += (a >> 20) & 255;
	if (family == 6 || family >= 15)
		model += ((a >> 16) & 15) << 4;
	__cpuid_count(7, 0, a7, b7, c7, d7);
	printf("%s %u %u %u avx2=%u avx512f=%u\n", vendor, family, model, a & 15, (b7 >> 5) & 1,
	       (b7 >> 16) & 1);
	return 0;
}
