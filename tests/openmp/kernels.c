/* OpenMP kernels differentiated by enzyme-build: every gradient is checked against central
   finite differences, every forward-mode tangent against the gradient (dot product with a
   random direction). Prints "OK <kernel> <mode>" or "FAIL <kernel> <mode> ..." lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

extern int enzyme_dup, enzyme_const, enzyme_out;
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);

#define N 37

/* static schedule, reduction(+:s), a shared active scalar (c) */
double static_reduction(double *x, double *y, int n, double c) {
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+:s)
    for (int i = 0; i < n; i++) {
        y[i] = sin(x[i]) * c;
        s += y[i] * x[i];
    }
    return s;
}

/* dynamic schedule with chunks; the loss is summed serially after the region */
double dynamic_chunks(double *x, double *y, int n, double c) {
#pragma omp parallel for schedule(dynamic, 3)
    for (int i = 0; i < n; i++)
        y[i] = x[i] * x[i] * c + exp(0.1 * x[i]);
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i] * (i + 1);
    return s;
}

/* a stencil: adjoints of x[i-1], x[i], x[i+1] from different threads meet (atomics) */
double stencil(double *x, double *y, int n, double c) {
#pragma omp parallel for schedule(static, 2)
    for (int i = 1; i < n - 1; i++)
        y[i] = x[i - 1] * x[i] + c * x[i + 1] * x[i + 1];
    double s = 0;
    for (int i = 1; i < n - 1; i++) s += y[i] * y[i];
    return s;
}

/* the same neighbours under the plain static schedule (one block of rows per thread): inside
   its block a thread adds plainly, at the block edges atomically (address-range footprints) */
double stencil_blocks(double *x, double *y, int n, double c) {
#pragma omp parallel for schedule(static)
    for (int i = 1; i < n - 1; i++)
        y[i] = x[i - 1] * x[i + 1] + c * sin(x[i]) - x[i + 1];
    double s = 0;
    for (int i = 1; i < n - 1; i++) s += y[i] * y[i] * (1 + 0.1 * i);
    return s;
}

/* firstprivate scalar (captured by value), private temporary */
double private_data(double *x, double *y, int n, double c) {
    double t;
    double k = c * 2.0;
#pragma omp parallel for firstprivate(k) private(t)
    for (int i = 0; i < n; i++) {
        t = k * x[i];
        y[i] = t * t + cos(t);
    }
    double s = 0;
    for (int i = 0; i < n; i++) s += y[i];
    return s;
}

/* omp atomic updates of a shared accumulator */
double atomic_sum(double *x, double *y, int n, double c) {
    double s = 0;
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
#pragma omp atomic
        s += x[i] * x[i] * c;
    }
    return s * s;
}

/* one parallel region, two worksharing loops separated by a barrier, blocking reduction */
double two_phases(double *x, double *y, int n, double c) {
    double s = 0;
#pragma omp parallel
    {
#pragma omp for
        for (int i = 0; i < n; i++) y[i] = x[i] * x[i] + c;
#pragma omp for reduction(+:s)
        for (int i = 0; i < n; i++) s += y[(i + 1) % n] * x[i];
    }
    return s;
}

/* guided and runtime schedules (OMP_SCHEDULE), num_threads(3) */
double guided_runtime(double *x, double *y, int n, double c) {
    double s = 0;
#pragma omp parallel for schedule(guided) reduction(+:s)
    for (int i = 0; i < n; i++) s += sin(x[i]) * x[(i + 3) % n] * c;
#pragma omp parallel for schedule(runtime) num_threads(3)
    for (int i = 1; i < n; i++) y[i] = x[i] * x[i - 1] * s;
    double t = 0;
    for (int i = 1; i < n; i++) t += y[i];
    return t;
}

/* `parallel for if(…)` that is false: the encountering thread calls the region's function
   directly (no fork), and its derivative must not rely on the fork wrappers */
double serialized_if(double *x, double *y, int n, double c) {
#pragma omp parallel for if(n > 1000)
    for (int i = 1; i < n - 1; i++) y[i] = x[i - 1] * x[i + 1] * c + sin(x[i]);
    double s = 0;
    for (int i = 1; i < n - 1; i++) s += y[i] * y[i];
    return s;
}

/* one reduction(+:…) clause over a double and an int */
double mixed_reduction(double *x, double *y, int n, double c) {
    double s = 0;
    int count = 0;
#pragma omp parallel for reduction(+:s, count)
    for (int i = 0; i < n; i++) {
        s += x[i] * x[i] * c;
        count += x[i] > 0.5;
    }
    return s * count;
}

/* num_threads(4) behind an if(…) clause: a team larger than OMP_NUM_THREADS announces */
double team_of_four(double *x, double *y, int n, double c) {
    double s = 0;
#pragma omp parallel for if(n > 10) num_threads(4) reduction(+:s) schedule(dynamic, 2)
    for (int i = 0; i < n; i++) s += sin(x[i] * c) * x[i];
    return s;
}

/* lastprivate: the thread that ran the last iteration copies its t out */
double last_private(double *x, double *y, int n, double c) {
    double t = 0;
#pragma omp parallel for lastprivate(t) schedule(static, 3)
    for (int i = 0; i < n; i++) t = sin(x[i]) * x[i] * c;
    return t * t;
}

/* single, master and sections in one region, ordered by barriers */
double single_master_sections(double *x, double *y, int n, double c) {
#pragma omp parallel
    {
#pragma omp single
        y[0] = x[0] * x[1] * c;
#pragma omp for
        for (int i = 4; i < n; i++) y[i] = x[i] * y[0];
#pragma omp master
        y[1] = sin(y[n - 1]);
#pragma omp barrier
#pragma omp sections
        {
#pragma omp section
            y[2] = x[2] * x[2];
#pragma omp section
            y[3] = cos(x[3]) + y[1];
        }
    }
    double s = 0;
    for (int i = 4; i < n; i++) s += y[i] * y[i];
    return s + y[2] * y[3] + y[1];
}

typedef double (*kernel)(double *, double *, int, double);

static int check(const char *name, kernel f, void *fp, double (*grad)(double *, double *, double *, double *, int, double),
                 double (*tangent)(double *, double *, double *, double *, int, double, double)) {
    double x[N], dx[N] = {0}, y[N], dy[N] = {0}, tx[N], ty[N] = {0}, xp[N];
    unsigned seed = 7;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = 0.2 + 0.8 * (double)(seed % 1000) / 1000.0;
        seed = seed * 1103515245u + 12345u;
        tx[i] = (double)(seed % 1000) / 1000.0 - 0.5;
    }
    double c = 0.7, tc = 0.3;
    double dc = grad(x, dx, y, dy, N, c);
    int bad = 0;
    double h = 1e-6;
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < N; k++) xp[k] = x[k];
        xp[i] = x[i] + h;
        double fp1 = f(xp, y, N, c);
        xp[i] = x[i] - h;
        double fm1 = f(xp, y, N, c);
        double fd = (fp1 - fm1) / (2 * h);
        if (fabs(fd - dx[i]) > 1e-5 * (1 + fabs(fd))) {
            if (bad < 5) printf("FAIL %s reverse dx[%d] = %.10g, finite differences %.10g\n", name, i, dx[i], fd);
            bad++;
        }
    }
    double fdc = (f(x, y, N, c + h) - f(x, y, N, c - h)) / (2 * h);
    if (fabs(fdc - dc) > 1e-5 * (1 + fabs(fdc))) {
        printf("FAIL %s reverse dc = %.10g, finite differences %.10g\n", name, dc, fdc);
        bad++;
    }
    if (!bad) printf("OK %s reverse\n", name);
    double dir = tc * dc;
    for (int i = 0; i < N; i++) dir += tx[i] * dx[i];
    double t = tangent(x, tx, y, ty, N, c, tc);
    if (fabs(t - dir) > 1e-8 * (1 + fabs(dir))) {
        printf("FAIL %s forward tangent = %.12g, gradient . direction = %.12g\n", name, t, dir);
        bad++;
    } else {
        printf("OK %s forward\n", name);
    }
    return bad;
}

#define DRIVERS(K)                                                                                  \
    static double grad_##K(double *x, double *dx, double *y, double *dy, int n, double c) {         \
        return __enzyme_autodiff((void *)K, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, n, \
                                 enzyme_out, c);                                                    \
    }                                                                                               \
    static double tan_##K(double *x, double *tx, double *y, double *ty, int n, double c, double tc) { \
        return __enzyme_fwddiff((void *)K, enzyme_dup, x, tx, enzyme_dup, y, ty, enzyme_const, n,  \
                                enzyme_dup, c, tc);                                                 \
    }

DRIVERS(static_reduction)
DRIVERS(dynamic_chunks)
DRIVERS(stencil)
DRIVERS(stencil_blocks)
DRIVERS(private_data)
DRIVERS(atomic_sum)
DRIVERS(two_phases)
DRIVERS(guided_runtime)
DRIVERS(serialized_if)
DRIVERS(mixed_reduction)
DRIVERS(team_of_four)
DRIVERS(last_private)
DRIVERS(single_master_sections)

int main(void) {
    int bad = 0;
    printf("threads %d\n", omp_get_max_threads());
#define RUN(K) bad += check(#K, K, (void *)K, grad_##K, tan_##K)
    RUN(static_reduction);
    RUN(dynamic_chunks);
    RUN(stencil);
    RUN(stencil_blocks);
    RUN(private_data);
    RUN(atomic_sum);
    RUN(two_phases);
    RUN(guided_runtime);
    RUN(serialized_if);
    RUN(mixed_reduction);
    RUN(team_of_four);
    RUN(last_private);
    RUN(single_master_sections);
    return bad != 0;
}
