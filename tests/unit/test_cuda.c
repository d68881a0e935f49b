/* The CUDA runtime loaded with dlopen: errors without one, and the real
 * load path against the fake runtime of tests/fake_cudart.c, whose path
 * `make unit` passes in DOCDEX_FAKE_CUDART. */
#include <dlfcn.h>

#include "dxbench.h"
#include "docdex.h"
#include "unit.h"

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define CHECK_STR(a, b)                                                                     \
	do {                                                                                \
		if (strcmp((a), (b)) != 0) {                                                \
			fprintf(stderr, "%s:%d: got '%s', want '%s'\n", __FILE__, __LINE__, (a), (b)); \
			unit_failures++;                                                    \
		}                                                                           \
	} while (0)

/* dxb_cuda_open fails with DX_EINVAL and this what. */
static void open_fails(int device, const char *what)
{
	dx_err err = { 0 };
	dxb_cuda *cu = dxb_cuda_open(device, &err);
	CHECK(cu == NULL);
	dxb_cuda_close(cu);
	CHECK_EQ(err.code, DX_EINVAL);
	CHECK_EQ(err.sys, 0);
	CHECK_STR(err.what, what);
}

typedef int (*outstanding_fn)(void);

static void with_fake(const char *fake)
{
	/* A handle of our own keeps the fake loaded across opens and closes,
	 * and gives its count of what is still handed out. */
	void *self = dlopen(fake, RTLD_NOW | RTLD_LOCAL);
	CHECK(self != NULL);
	if (!self) {
		fprintf(stderr, "%s\n", dlerror());
		return;
	}
	outstanding_fn outstanding = (outstanding_fn)dlsym(self, "fake_cudart_outstanding");
	CHECK(outstanding != NULL);
	if (!outstanding)
		goto out;

	setenv("DOCDEX_CUDART", fake, 1);
	unsetenv("FAKE_CUDART_DEVICES");
	unsetenv("FAKE_CUDART_FAIL");
	dx_err err = { 0 };
	dxb_cuda *cu = dxb_cuda_open(0, &err);
	CHECK(cu != NULL);
	if (!cu) {
		fprintf(stderr, "dxb_cuda_open: %s: '%s'\n", err.what, err.subject);
		goto out;
	}
	dxb_cuda_info info;
	dxb_cuda_get_info(cu, &info);
	CHECK_STR(info.library, fake);
	CHECK_EQ(info.runtime_version, 12040);
	CHECK_EQ(info.driver_version, 12040);
	CHECK_EQ(info.devices, 1);
	CHECK_EQ(outstanding(), 1); /* the stream */

	/* Page-locked host memory to device memory: the fake's device memory
	 * is host memory, so the bytes can be compared. */
	enum { N = 100000 };
	unsigned char *host = dxb_cuda_host_alloc(cu, N, &err);
	unsigned char *dev = dxb_cuda_device_alloc(cu, N, &err);
	CHECK(host != NULL);
	CHECK(dev != NULL);
	if (host && dev) {
		for (size_t i = 0; i < N; i++)
			host[i] = (unsigned char)(i * 7 + 3);
		memset(dev, 0, N);
		CHECK_EQ(dxb_cuda_copy_to_device(cu, dev, host, N, &err), 0);
		CHECK_EQ(dxb_cuda_sync(cu, &err), 0);
		CHECK(memcmp(dev, host, N) == 0);
		/* Part of it, at an offset. */
		memset(dev, 0, N);
		CHECK_EQ(dxb_cuda_copy_to_device(cu, dev + 10, host + 20, 1000, &err), 0);
		CHECK_EQ(dxb_cuda_sync(cu, &err), 0);
		CHECK(memcmp(dev + 10, host + 20, 1000) == 0);
		CHECK_EQ(dev[9], 0);
		CHECK_EQ(dev[1010], 0);
	}

	/* Existing memory, page-locked in place. */
	unsigned char *mem = malloc(N);
	CHECK_EQ(dxb_cuda_host_register(cu, mem, N, &err), 0);
	CHECK_EQ(outstanding(), 4);
	if (dev) {
		memset(mem, 0x5a, N);
		CHECK_EQ(dxb_cuda_copy_to_device(cu, dev, mem, N, &err), 0);
		CHECK_EQ(dxb_cuda_sync(cu, &err), 0);
		CHECK(memcmp(dev, mem, N) == 0);
	}
	/* Twice is an error of the runtime's, named. */
	CHECK_EQ(dxb_cuda_host_register(cu, mem, N, &err), DX_EINVAL);
	CHECK_STR(err.what, "cudaHostRegister failed: cudaErrorHostMemoryAlreadyRegistered");
	dxb_cuda_host_unregister(cu, mem);
	CHECK_EQ(outstanding(), 3);
	free(mem);

	/* Failed calls name the function and the error. */
	setenv("FAKE_CUDART_FAIL", "cudaMalloc", 1);
	memset(&err, 0, sizeof err);
	CHECK(dxb_cuda_device_alloc(cu, 10, &err) == NULL);
	CHECK_EQ(err.code, DX_EINVAL);
	CHECK_STR(err.what, "cudaMalloc failed: cudaErrorMemoryAllocation");
	setenv("FAKE_CUDART_FAIL", "cudaHostAlloc", 1);
	CHECK(dxb_cuda_host_alloc(cu, 10, &err) == NULL);
	CHECK_STR(err.what, "cudaHostAlloc failed: cudaErrorMemoryAllocation");
	setenv("FAKE_CUDART_FAIL", "cudaMemcpyAsync", 1);
	CHECK_EQ(dxb_cuda_copy_to_device(cu, dev, host, 10, &err), DX_EINVAL);
	CHECK_STR(err.what, "cudaMemcpyAsync failed: cudaErrorUnknown");
	setenv("FAKE_CUDART_FAIL", "cudaStreamSynchronize", 1);
	CHECK_EQ(dxb_cuda_sync(cu, &err), DX_EINVAL);
	CHECK_STR(err.what, "cudaStreamSynchronize failed: cudaErrorUnknown");
	unsetenv("FAKE_CUDART_FAIL");

	dxb_cuda_device_free(cu, dev);
	dxb_cuda_host_free(cu, host);
	dxb_cuda_host_free(cu, NULL);
	dxb_cuda_device_free(cu, NULL);
	CHECK_EQ(outstanding(), 1);
	dxb_cuda_close(cu);
	CHECK_EQ(outstanding(), 0); /* close destroyed the stream */

	/* A second device, and one that does not exist. */
	setenv("FAKE_CUDART_DEVICES", "2", 1);
	cu = dxb_cuda_open(1, &err);
	CHECK(cu != NULL);
	if (cu) {
		dxb_cuda_get_info(cu, &info);
		CHECK_EQ(info.devices, 2);
	}
	dxb_cuda_close(cu);
	open_fails(2, "no CUDA device 2 (2 found)");
	open_fails(-1, "no CUDA device -1 (2 found)");

	/* No device at all. */
	setenv("FAKE_CUDART_DEVICES", "0", 1);
	open_fails(0, "no CUDA device: cudaErrorNoDevice");
	memset(&err, 0, sizeof err);
	CHECK(dxb_cuda_open(0, &err) == NULL);
	CHECK_STR(err.subject, fake);
	unsetenv("FAKE_CUDART_DEVICES");

	/* A call that fails while opening leaves nothing behind. */
	setenv("FAKE_CUDART_FAIL", "cudaStreamCreate", 1);
	open_fails(0, "cudaStreamCreate failed: cudaErrorUnknown");
	setenv("FAKE_CUDART_FAIL", "cudaSetDevice", 1);
	open_fails(0, "cudaSetDevice failed: cudaErrorUnknown");
	setenv("FAKE_CUDART_FAIL", "cudaRuntimeGetVersion", 1);
	open_fails(0, "cudaRuntimeGetVersion failed: cudaErrorUnknown");
	unsetenv("FAKE_CUDART_FAIL");
	CHECK_EQ(outstanding(), 0);

out:
	dlclose(self);
}

int main(void)
{
	/* No runtime where DOCDEX_CUDART points. */
	const char *missing = "/nonexistent/dx-unit/libcudart.so";
	setenv("DOCDEX_CUDART", missing, 1);
	dx_err err = { 0 };
	dxb_cuda *cu = dxb_cuda_open(0, &err);
	CHECK(cu == NULL);
	dxb_cuda_close(cu);
	CHECK_EQ(err.code, DX_EINVAL);
	CHECK(starts_with(err.what, "no CUDA runtime ("));
	CHECK_STR(err.subject, missing);

	/* A library that is not the runtime. */
	const char *other = "libm.so.6";
	void *h = dlopen(other, RTLD_NOW | RTLD_LOCAL);
	if (h) {
		dlclose(h);
		setenv("DOCDEX_CUDART", other, 1);
		open_fails(0, "the CUDA runtime lacks cudaGetErrorName");
	}

	const char *fake = getenv("DOCDEX_FAKE_CUDART");
	if (fake && *fake)
		with_fake(fake);
	else
		fprintf(stderr, "%s: DOCDEX_FAKE_CUDART is not set: skipping the checks "
		                "against the fake runtime (make unit sets it)\n", __FILE__);
	unsetenv("DOCDEX_CUDART");
	UNIT_DONE();
}
