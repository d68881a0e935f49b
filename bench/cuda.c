/*
 * cuda.c: the CUDA runtime, loaded at run time with dlopen.
 *
 * docdex never links against CUDA and includes none of its headers: the
 * runtime's functions are looked up with dlsym and called through pointer
 * types of our own, in plain C types (cudaError_t is an int, cudaStream_t
 * a void *, cudaMemcpyKind an int).  The device's name and memory come from
 * the driver library (libcuda.so.1) when it loads, since the runtime's
 * cudaDeviceProp changes layout between versions.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dxbench.h"
#include "err.h"

/* dlinfo(RTLD_DI_LINKMAP): an enum in glibc, a macro in musl. */
#if defined(__GLIBC__) || defined(RTLD_DI_LINKMAP)
#define DX_HAVE_DLINFO 1
#include <link.h>
#endif

/* The values of the runtime's enums and flags that are used here. */
enum { CUDA_SUCCESS = 0, CUDA_MEMCPY_HOST_TO_DEVICE = 1 };
enum { CUDA_HOST_ALLOC_DEFAULT = 0, CUDA_HOST_REGISTER_DEFAULT = 0 };

typedef const char *(*get_error_name_fn)(int rc);
typedef int (*get_int_fn)(int *out);
typedef int (*set_device_fn)(int device);
typedef int (*host_alloc_fn)(void **p, size_t n, unsigned flags);
typedef int (*free_fn)(void *p);
typedef int (*host_register_fn)(void *p, size_t n, unsigned flags);
typedef int (*malloc_fn)(void **p, size_t n);
typedef int (*stream_create_fn)(void **stream);
typedef int (*memcpy_async_fn)(void *dst, const void *src, size_t n, int kind, void *stream);

/* The driver API: CUresult is an int, CUdevice an int. */
typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_device_get_fn)(int *dev, int ordinal);
typedef int (*cu_device_get_name_fn)(char *name, int len, int dev);
typedef int (*cu_device_total_mem_fn)(size_t *bytes, int dev);

struct dxb_cuda {
	void *rt;                 /* the dlopen handle of the runtime */
	void *stream;             /* cudaStream_t */
	int device;
	dxb_cuda_info info;

	get_error_name_fn cudaGetErrorName;
	get_int_fn cudaRuntimeGetVersion;
	get_int_fn cudaDriverGetVersion;
	get_int_fn cudaGetDeviceCount;
	set_device_fn cudaSetDevice;
	host_alloc_fn cudaHostAlloc;
	free_fn cudaFreeHost;
	host_register_fn cudaHostRegister;
	free_fn cudaHostUnregister;
	malloc_fn cudaMalloc;
	free_fn cudaFree;
	stream_create_fn cudaStreamCreate;
	free_fn cudaStreamDestroy;
	memcpy_async_fn cudaMemcpyAsync;
	free_fn cudaStreamSynchronize;
};

static const char *const default_libraries[] = {
	"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
};

/* The name of a CUDA error, for err->what. */
static const char *error_name(const dxb_cuda *cu, int rc, char *buf, size_t bufsz)
{
	const char *name = cu->cudaGetErrorName ? cu->cudaGetErrorName(rc) : NULL;
	if (name && *name)
		return name;
	snprintf(buf, bufsz, "CUDA error %d", rc);
	return buf;
}

/* A runtime call failed: DX_EINVAL, "<function> failed: <error name>". */
static int fail_call(const dxb_cuda *cu, dx_err *err, const char *subject, const char *fn, int rc)
{
	char buf[32];
	return dx__fail(err, DX_EINVAL, 0, subject, "%s failed: %s", fn,
	                error_name(cu, rc, buf, sizeof buf));
}

/* Makes the handle's device current for this thread: the runtime keeps the
 * current device per thread, and the handle may be used from another. */
static int use_device(dxb_cuda *cu, dx_err *err)
{
	int rc = cu->cudaSetDevice(cu->device);
	return rc == CUDA_SUCCESS ? 0 : fail_call(cu, err, "", "cudaSetDevice", rc);
}

/* Opens the runtime: $DOCDEX_CUDART, else the first default name that
 * loads.  Records the file loaded in cu->info.library. */
static int load_runtime(dxb_cuda *cu, dx_err *err)
{
	const char *env = getenv("DOCDEX_CUDART");
	const char *name = NULL;
	if (env && *env) {
		name = env;
		cu->rt = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!cu->rt) {
			/* dlerror's text starts with the file's name, which is the
			 * subject already. */
			const char *why = dlerror();
			size_t len = strlen(env);
			if (!why)
				why = "cannot load it";
			else if (strncmp(why, env, len) == 0 && why[len] == ':')
				why += len + 1 + (why[len + 1] == ' ');
			return dx__fail(err, DX_EINVAL, 0, env, "no CUDA runtime (%s)", why);
		}
	} else {
		size_t n = sizeof default_libraries / sizeof *default_libraries;
		for (size_t i = 0; !cu->rt && i < n; i++) {
			name = default_libraries[i];
			cu->rt = dlopen(name, RTLD_NOW | RTLD_LOCAL);
		}
		if (!cu->rt)
			return dx__fail(err, DX_EINVAL, 0, "", "no CUDA runtime (libcudart.so not found)");
	}
	snprintf(cu->info.library, sizeof cu->info.library, "%s", name);
#ifdef DX_HAVE_DLINFO
	/* The path the dynamic linker found, when dlopen searched for a bare name. */
	struct link_map *map = NULL;
	if (dlinfo(cu->rt, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
		snprintf(cu->info.library, sizeof cu->info.library, "%s", map->l_name);
#endif
	return 0;
}

/* Looks up the runtime's functions. */
static int load_symbols(dxb_cuda *cu, dx_err *err)
{
#define DX_CUDA_SYM(fn, type)                                                                  \
	do {                                                                                   \
		if (!(cu->fn = (type)dlsym(cu->rt, #fn)))                                     \
			return dx__fail(err, DX_EINVAL, 0, cu->info.library,                 \
			                "the CUDA runtime lacks " #fn);                        \
	} while (0)
	DX_CUDA_SYM(cudaGetErrorName, get_error_name_fn);
	DX_CUDA_SYM(cudaRuntimeGetVersion, get_int_fn);
	DX_CUDA_SYM(cudaDriverGetVersion, get_int_fn);
	DX_CUDA_SYM(cudaGetDeviceCount, get_int_fn);
	DX_CUDA_SYM(cudaSetDevice, set_device_fn);
	DX_CUDA_SYM(cudaHostAlloc, host_alloc_fn);
	DX_CUDA_SYM(cudaFreeHost, free_fn);
	DX_CUDA_SYM(cudaHostRegister, host_register_fn);
	DX_CUDA_SYM(cudaHostUnregister, free_fn);
	DX_CUDA_SYM(cudaMalloc, malloc_fn);
	DX_CUDA_SYM(cudaFree, free_fn);
	DX_CUDA_SYM(cudaStreamCreate, stream_create_fn);
	DX_CUDA_SYM(cudaStreamDestroy, free_fn);
	DX_CUDA_SYM(cudaMemcpyAsync, memcpy_async_fn);
	DX_CUDA_SYM(cudaStreamSynchronize, free_fn);
#undef DX_CUDA_SYM
	return 0;
}

/* The device's name and memory from the driver library, when it loads;
 * left "" and 0 otherwise, since the runtime works without them. */
static void driver_info(dxb_cuda *cu)
{
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!drv)
		return;
	cu_init_fn init = (cu_init_fn)dlsym(drv, "cuInit");
	cu_device_get_fn get = (cu_device_get_fn)dlsym(drv, "cuDeviceGet");
	cu_device_get_name_fn get_name = (cu_device_get_name_fn)dlsym(drv, "cuDeviceGetName");
	cu_device_total_mem_fn total_mem = (cu_device_total_mem_fn)dlsym(drv, "cuDeviceTotalMem_v2");
	int dev;
	if (!init || !get || init(0) != CUDA_SUCCESS || get(&dev, cu->device) != CUDA_SUCCESS)
		goto out;
	char name[sizeof cu->info.device_name];
	if (get_name && get_name(name, (int)sizeof name, dev) == CUDA_SUCCESS) {
		name[sizeof name - 1] = '\0';
		memcpy(cu->info.device_name, name, sizeof name);
	}
	size_t bytes;
	if (total_mem && total_mem(&bytes, dev) == CUDA_SUCCESS)
		cu->info.device_memory = bytes;
out:
	dlclose(drv);
}

/* rc from a runtime call made while opening: 0, or DX_EINVAL with err
 * filled. */
static int check(const dxb_cuda *cu, dx_err *err, const char *fn, int rc)
{
	return rc == CUDA_SUCCESS ? 0 : fail_call(cu, err, cu->info.library, fn, rc);
}

dxb_cuda *dxb_cuda_open(int device, dx_err *err)
{
	dxb_cuda *cu = calloc(1, sizeof *cu);
	if (!cu) {
		dx__fail_nomem(err);
		return NULL;
	}
	cu->device = device;
	if (load_runtime(cu, err) < 0 || load_symbols(cu, err) < 0)
		goto fail;
	const char *lib = cu->info.library;
	char buf[32];
	int count = 0, rc = cu->cudaGetDeviceCount(&count);
	if (rc != CUDA_SUCCESS) {
		dx__fail(err, DX_EINVAL, 0, lib, "no CUDA device: %s", error_name(cu, rc, buf, sizeof buf));
		goto fail;
	}
	if (count <= 0) {
		dx__fail(err, DX_EINVAL, 0, lib, "no CUDA device");
		goto fail;
	}
	cu->info.devices = count;
	if (device < 0 || device >= count) {
		dx__fail(err, DX_EINVAL, 0, lib, "no CUDA device %d (%d found)", device, count);
		goto fail;
	}
	dxb_cuda_info *in = &cu->info;
	void *stream = NULL;
	if (check(cu, err, "cudaSetDevice", cu->cudaSetDevice(device)) < 0 ||
	    check(cu, err, "cudaRuntimeGetVersion", cu->cudaRuntimeGetVersion(&in->runtime_version)) < 0 ||
	    check(cu, err, "cudaDriverGetVersion", cu->cudaDriverGetVersion(&in->driver_version)) < 0 ||
	    check(cu, err, "cudaStreamCreate", cu->cudaStreamCreate(&stream)) < 0)
		goto fail;
	cu->stream = stream;
	driver_info(cu);
	return cu;

fail:
	dxb_cuda_close(cu);
	return NULL;
}

void dxb_cuda_close(dxb_cuda *cu)
{
	if (!cu)
		return;
	if (cu->stream)
		cu->cudaStreamDestroy(cu->stream);
	if (cu->rt)
		dlclose(cu->rt);
	free(cu);
}

void dxb_cuda_get_info(const dxb_cuda *cu, dxb_cuda_info *info)
{
	*info = cu->info;
}

void *dxb_cuda_host_alloc(dxb_cuda *cu, size_t n, dx_err *err)
{
	void *p = NULL;
	if (use_device(cu, err) < 0)
		return NULL;
	/* As malloc: a size of 0 still gives a pointer to free. */
	int rc = cu->cudaHostAlloc(&p, n ? n : 1, CUDA_HOST_ALLOC_DEFAULT);
	if (rc != CUDA_SUCCESS || !p) {
		fail_call(cu, err, "", "cudaHostAlloc", rc);
		return NULL;
	}
	return p;
}

void dxb_cuda_host_free(dxb_cuda *cu, void *p)
{
	if (cu && p)
		cu->cudaFreeHost(p);
}

int dxb_cuda_host_register(dxb_cuda *cu, void *p, size_t n, dx_err *err)
{
	if (use_device(cu, err) < 0)
		return DX_EINVAL;
	int rc = cu->cudaHostRegister(p, n, CUDA_HOST_REGISTER_DEFAULT);
	return rc == CUDA_SUCCESS ? 0 : fail_call(cu, err, "", "cudaHostRegister", rc);
}

void dxb_cuda_host_unregister(dxb_cuda *cu, void *p)
{
	if (cu && p)
		cu->cudaHostUnregister(p);
}

void *dxb_cuda_device_alloc(dxb_cuda *cu, size_t n, dx_err *err)
{
	void *p = NULL;
	if (use_device(cu, err) < 0)
		return NULL;
	int rc = cu->cudaMalloc(&p, n ? n : 1);
	if (rc != CUDA_SUCCESS || !p) {
		fail_call(cu, err, "", "cudaMalloc", rc);
		return NULL;
	}
	return p;
}

void dxb_cuda_device_free(dxb_cuda *cu, void *p)
{
	if (cu && p)
		cu->cudaFree(p);
}

int dxb_cuda_copy_to_device(dxb_cuda *cu, void *dev, const void *host, size_t n, dx_err *err)
{
	if (use_device(cu, err) < 0)
		return DX_EINVAL;
	int rc = cu->cudaMemcpyAsync(dev, host, n, CUDA_MEMCPY_HOST_TO_DEVICE, cu->stream);
	return rc == CUDA_SUCCESS ? 0 : fail_call(cu, err, "", "cudaMemcpyAsync", rc);
}

int dxb_cuda_sync(dxb_cuda *cu, dx_err *err)
{
	int rc = cu->cudaStreamSynchronize(cu->stream);
	return rc == CUDA_SUCCESS ? 0 : fail_call(cu, err, "", "cudaStreamSynchronize", rc);
}
