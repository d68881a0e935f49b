/*
 * fake_cudart.c: a tiny stand-in for the CUDA runtime (libcudart.so), for
 * the unit tests of bench/cuda.c on machines without CUDA.  It exports the
 * runtime functions docdex calls, with their signatures in plain C types,
 * and implements them on the host: "device" memory is host memory, copies
 * are memcpy, and streams finish at once.
 *
 * The environment steers it:
 *   FAKE_CUDART_DEVICES  the number of devices (default 1); 0 makes
 *                        cudaGetDeviceCount fail with cudaErrorNoDevice
 *   FAKE_CUDART_FAIL     the name of one function that fails (with
 *                        cudaErrorMemoryAllocation for the allocators,
 *                        cudaErrorUnknown for the others)
 *
 * It keeps a table of what it handed out, so that freeing or unregistering
 * a pointer it does not know fails as the real runtime does, and exports
 * fake_cudart_outstanding() for tests to check that everything was given
 * back.  Built as a shared object: $(B)/tests/libfakecudart.so.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The runtime's error codes that the fake returns. */
enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorHostMemoryAlreadyRegistered = 712,
	cudaErrorHostMemoryNotRegistered = 713,
	cudaErrorUnknown = 999
};

enum { cudaMemcpyHostToDevice = 1 };

#define FAKE_VERSION 12040

/* What was handed out: host allocations, device allocations, registered
 * ranges and streams. */
enum { KIND_HOST = 1, KIND_DEVICE, KIND_REGISTERED, KIND_STREAM };
enum { SLOTS = 256 };
static struct { void *p; size_t n; int kind; } slots[SLOTS];

#define EXPORT __attribute__((visibility("default")))

/* Prototypes, for -Wmissing-prototypes: these are the exported interface. */
EXPORT const char *cudaGetErrorName(int rc);
EXPORT int cudaRuntimeGetVersion(int *v);
EXPORT int cudaDriverGetVersion(int *v);
EXPORT int cudaGetDeviceCount(int *count);
EXPORT int cudaSetDevice(int device);
EXPORT int cudaHostAlloc(void **p, size_t n, unsigned flags);
EXPORT int cudaFreeHost(void *p);
EXPORT int cudaHostRegister(void *p, size_t n, unsigned flags);
EXPORT int cudaHostUnregister(void *p);
EXPORT int cudaMalloc(void **p, size_t n);
EXPORT int cudaFree(void *p);
EXPORT int cudaStreamCreate(void **stream);
EXPORT int cudaStreamDestroy(void *stream);
EXPORT int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *stream);
EXPORT int cudaStreamSynchronize(void *stream);
EXPORT int fake_cudart_outstanding(void);

static int devices(void)
{
	const char *s = getenv("FAKE_CUDART_DEVICES");
	return s && *s ? atoi(s) : 1;
}

/* Whether FAKE_CUDART_FAIL names fn. */
static int failing(const char *fn)
{
	const char *s = getenv("FAKE_CUDART_FAIL");
	return s && strcmp(s, fn) == 0;
}

static int add(void *p, size_t n, int kind)
{
	for (int i = 0; i < SLOTS; i++)
		if (!slots[i].kind) {
			slots[i].p = p;
			slots[i].n = n;
			slots[i].kind = kind;
			return 1;
		}
	return 0;
}

/* The slot of p of this kind, or -1. */
static int find(const void *p, int kind)
{
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].kind == kind && slots[i].p == p)
			return i;
	return -1;
}

/* Whether [p, p + n) lies in one thing of this kind. */
static int within(const void *p, size_t n, int kind)
{
	uintptr_t a = (uintptr_t)p;
	for (int i = 0; i < SLOTS; i++) {
		uintptr_t b = (uintptr_t)slots[i].p;
		if (slots[i].kind == kind && a >= b && n <= slots[i].n && a - b <= slots[i].n - n)
			return 1;
	}
	return 0;
}

const char *cudaGetErrorName(int rc)
{
	switch (rc) {
	case cudaSuccess: return "cudaSuccess";
	case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
	case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
	case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
	case cudaErrorNoDevice: return "cudaErrorNoDevice";
	case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
	case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
	case cudaErrorHostMemoryAlreadyRegistered: return "cudaErrorHostMemoryAlreadyRegistered";
	case cudaErrorHostMemoryNotRegistered: return "cudaErrorHostMemoryNotRegistered";
	case cudaErrorUnknown: return "cudaErrorUnknown";
	}
	return "unrecognized error code";
}

int cudaRuntimeGetVersion(int *v)
{
	if (failing("cudaRuntimeGetVersion"))
		return cudaErrorUnknown;
	*v = FAKE_VERSION;
	return cudaSuccess;
}

int cudaDriverGetVersion(int *v)
{
	if (failing("cudaDriverGetVersion"))
		return cudaErrorUnknown;
	*v = FAKE_VERSION;
	return cudaSuccess;
}

int cudaGetDeviceCount(int *count)
{
	*count = devices();
	if (*count <= 0) {
		*count = 0;
		return cudaErrorNoDevice;
	}
	return cudaSuccess;
}

int cudaSetDevice(int device)
{
	if (failing("cudaSetDevice"))
		return cudaErrorUnknown;
	return device >= 0 && device < devices() ? cudaSuccess : cudaErrorInvalidDevice;
}

/* Host or "device" memory of kind, from malloc, for the allocator fn. */
static int allocate(const char *fn, void **p, size_t n, int kind)
{
	if (failing(fn) || !(*p = malloc(n)))
		return cudaErrorMemoryAllocation;
	if (!add(*p, n, kind)) {
		free(*p);
		*p = NULL;
		return cudaErrorMemoryAllocation;
	}
	return cudaSuccess;
}

/* Frees what allocate gave for kind; NULL is fine, anything else fails. */
static int release(void *p, int kind)
{
	int i = find(p, kind);
	if (!p)
		return cudaSuccess;
	if (i < 0)
		return cudaErrorInvalidValue;
	slots[i].kind = 0;
	free(p);
	return cudaSuccess;
}

int cudaHostAlloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	return allocate("cudaHostAlloc", p, n, KIND_HOST);
}

int cudaFreeHost(void *p)
{
	return release(p, KIND_HOST);
}

int cudaHostRegister(void *p, size_t n, unsigned flags)
{
	(void)flags;
	if (failing("cudaHostRegister"))
		return cudaErrorMemoryAllocation;
	if (!p || !n)
		return cudaErrorInvalidValue;
	if (find(p, KIND_REGISTERED) >= 0)
		return cudaErrorHostMemoryAlreadyRegistered;
	return add(p, n, KIND_REGISTERED) ? cudaSuccess : cudaErrorMemoryAllocation;
}

int cudaHostUnregister(void *p)
{
	int i = find(p, KIND_REGISTERED);
	if (i < 0)
		return cudaErrorHostMemoryNotRegistered;
	slots[i].kind = 0;
	return cudaSuccess;
}

int cudaMalloc(void **p, size_t n)
{
	return allocate("cudaMalloc", p, n, KIND_DEVICE);
}

int cudaFree(void *p)
{
	return release(p, KIND_DEVICE);
}

int cudaStreamCreate(void **stream)
{
	if (failing("cudaStreamCreate") || !(*stream = malloc(1)))
		return cudaErrorUnknown;
	if (!add(*stream, 1, KIND_STREAM)) {
		free(*stream);
		*stream = NULL;
		return cudaErrorUnknown;
	}
	return cudaSuccess;
}

int cudaStreamDestroy(void *stream)
{
	int i = find(stream, KIND_STREAM);
	if (i < 0)
		return cudaErrorInvalidResourceHandle;
	slots[i].kind = 0;
	free(stream);
	return cudaSuccess;
}

/* A real copy from pageable memory works too; the fake insists on
 * memory it handed out or registered, and on device memory it allocated,
 * so that the tests see docdex pass the right pointers. */
int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *stream)
{
	if (failing("cudaMemcpyAsync"))
		return cudaErrorUnknown;
	if (kind != cudaMemcpyHostToDevice)
		return cudaErrorInvalidMemcpyDirection;
	if (stream && find(stream, KIND_STREAM) < 0)
		return cudaErrorInvalidResourceHandle;
	/* The source may be any host memory: the runtime stages a copy from
	 * pageable memory through a pinned buffer of its own. */
	if (!within(dst, n, KIND_DEVICE) || !src)
		return cudaErrorInvalidValue;
	memcpy(dst, src, n);
	return cudaSuccess;
}

int cudaStreamSynchronize(void *stream)
{
	if (failing("cudaStreamSynchronize"))
		return cudaErrorUnknown;
	if (stream && find(stream, KIND_STREAM) < 0)
		return cudaErrorInvalidResourceHandle;
	return cudaSuccess;
}

/* The things handed out and not yet given back: allocations, registered
 * ranges and streams. */
int fake_cudart_outstanding(void)
{
	int n = 0;
	for (int i = 0; i < SLOTS; i++)
		n += slots[i].kind != 0;
	return n;
}
