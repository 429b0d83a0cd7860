"""Build the custom kernels at install time (metadata lives in pyproject.toml).

* CPU: ``mscompat/custom_ops/cpu/*_kernel.cc`` -> ``mscompat/custom_ops/_<name>_cpu*.so`` with g++,
  ``-O3`` and MindSpore's ``-D_GLIBCXX_USE_CXX11_ABI=0``. Optional: without a compiler the package
  installs, warns once at first use, and runs the composite implementations.
* GPU: ``mscompat/custom_ops/cuda/*_kernel.cu`` -> ``_<name>_cuda.so`` with nvcc, only when nvcc
  is found (or ``MSCOMPAT_BUILD_CUDA=1``); ``MSCOMPAT_BUILD_CUDA=0`` skips it. A failed CUDA build
  only warns.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
# x86_64 glibc: the AVX2 paths call glibc's vector math library (libmvec).
LIBMVEC = ["-lmvec"] if platform.machine() == "x86_64" and platform.libc_ver()[0] == "glibc" else []
CPU_SOURCES = sorted((HERE / "mscompat/custom_ops/cpu").glob("*_kernel.cc"))
CUDA_SOURCES = sorted((HERE / "mscompat/custom_ops/cuda").glob("*_kernel.cu"))


def _name(src: Path) -> str:
    return src.name[: -len("_kernel" + src.suffix)]


class BuildKernels(build_ext):
    """build_ext that also compiles the CUDA kernels with nvcc when available."""

    def run(self) -> None:
        super().run()
        self._build_cuda()

    def _build_cuda(self) -> None:
        flag = os.environ.get("MSCOMPAT_BUILD_CUDA", "auto")
        nvcc = shutil.which("nvcc")
        if flag == "0" or (flag == "auto" and nvcc is None):
            return
        if nvcc is None:
            print("mscompat: MSCOMPAT_BUILD_CUDA=1 but nvcc was not found", file=sys.stderr)
            return
        out_dir = Path(self.build_lib if not self.inplace else HERE) / "mscompat/custom_ops"
        out_dir.mkdir(parents=True, exist_ok=True)
        for src in CUDA_SOURCES:
            target = out_dir / f"_{_name(src)}_cuda.so"
            cmd = [
                nvcc,
                "-O3",
                "-shared",
                "-Xcompiler",
                "-fPIC",
                "-std=c++17",
                "-D_GLIBCXX_USE_CXX11_ABI=0",
                str(src),
                "-o",
                str(target),
            ]
            print("mscompat: " + " ".join(cmd))
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(
                    f"mscompat: CUDA kernel {src.name} not built:\n{proc.stderr[-2000:]}",
                    file=sys.stderr,
                )


setup(
    ext_modules=[
        Extension(
            f"mscompat.custom_ops._{_name(src)}_cpu",
            sources=[str(src.relative_to(HERE))],
            depends=[str(h.relative_to(HERE)) for h in sorted(src.parent.glob("*.h"))],
            language="c++",
            extra_compile_args=[
                "-std=c++17",
                "-O3",
                "-ffp-contract=off",
                "-D_GLIBCXX_USE_CXX11_ABI=0",
                "-pthread",
            ],
            extra_link_args=["-pthread", *LIBMVEC],
            optional=True,
        )
        for src in CPU_SOURCES
    ],
    cmdclass={"build_ext": BuildKernels},
)
