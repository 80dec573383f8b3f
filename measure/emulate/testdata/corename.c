/* Prints the core OpenBLAS's runtime dispatch chose (DYNAMIC_ARCH
 * builds, such as Debian's). */
#include <stdio.h>

extern char *openblas_get_corename(void);

int main(void)
{
	printf("%s\n", openblas_get_corename());
	return 0;
}
