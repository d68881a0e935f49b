"""Builds docdex._docdex, the C extension of the docdex package.

The extension links the core library statically: build lib/libdocdex.a
first with the top Makefile (``make python`` does both), then
``python3 setup.py build_ext --inplace`` here.  Nothing is fetched from the
network: setuptools and the Python headers are all it needs.
"""
import glob
import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
LIB = os.path.join(TOP, "lib")


def version():
    """DX_VERSION of lib/docdex.h."""
    with open(os.path.join(LIB, "docdex.h"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#define DX_VERSION \""):
                return line.split('"')[1]
    raise RuntimeError("no DX_VERSION in lib/docdex.h")


STATIC = os.path.join(LIB, "libdocdex.a")


def codec_libraries():
    """The codec libraries the core was built with (the top Makefile's
    build/codecs: "-ldeflate -lisal", some of them, or nothing)."""
    try:
        with open(os.path.join(TOP, "build", "codecs"), encoding="utf-8") as f:
            return [w[2:] for w in f.read().split() if w.startswith("-l")]
    except OSError:
        return []


if not os.path.exists(STATIC) and "clean" not in os.sys.argv:
    raise SystemExit("setup.py: lib/libdocdex.a is missing: run make in the top directory first")

ext = Extension(
    "docdex._docdex",
    sources=sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "src", "*.c"))),
    depends=glob.glob(os.path.join(HERE, "src", "*.h")) + [os.path.join(LIB, "docdex.h"), STATIC],
    include_dirs=[LIB],
    extra_objects=[STATIC],
    libraries=["z", "pthread", "m"] + codec_libraries(),
    # The core's dx_ functions stay inside the extension: another libdocdex
    # in the same process (a newer shared one) cannot be mixed up with them.
    extra_link_args=["-Wl,--exclude-libs,ALL"],
    extra_compile_args=["-Wall", "-Wextra", "-Wshadow", "-Wstrict-prototypes",
                        "-Wmissing-prototypes", "-fvisibility=hidden"],
)

setup(
    name="docdex",
    version=version(),
    description="Documents by id out of indexed IR corpora (MS MARCO, BEIR, TREC)",
    packages=["docdex"],
    package_data={"docdex": ["__init__.pyi", "torch.pyi", "py.typed"]},
    ext_modules=[ext],
    python_requires=">=3.8",
)
