// A 16-bit linear layer on tensor cores, one kernel (the bias added in the
// product's epilogue, tdim-fuse-contract-epilogue): on sm_90, wgmma from
// swizzled shared memory (the module compiled for sm_90a); on sm_80,
// mma.sync with ldmatrix; with tensor-cores=false, the general loops.
// cp.async stages the operands either way.
// RUN: nerve-translate %s --emit=ptx --libdevice=none | FileCheck %s --check-prefix=SM90
// RUN: nerve-translate %s --emit=ptx --libdevice=none --chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: nerve-opt %s --nerve-to-nvvm='libdevice=none tensor-cores=false' | FileCheck %s --check-prefix=OFF

// SM90-NOT: .target sm_90{{$}}
// SM90: .target sm_90a
// SM90: .visible .entry linear_kernel(
// SM90-NOT: .entry
// SM90-DAG: cp.async.cg.shared.global
// SM90-DAG: fence.proxy.async.shared::cta
// SM90-DAG: wgmma.fence.sync.aligned
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// SM90-DAG: wgmma.commit_group.sync.aligned
// SM90-DAG: wgmma.wait_group.sync.aligned

// SM80-NOT: sm_90a
// SM80: .target sm_80
// SM80: cp.async.cg.shared.global
// SM80: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM80-NOT: wgmma

// OFF-NOT: nvvm.mma
// OFF-NOT: nvvm.wgmma
// OFF: gpu.module

tdim.kernel @linear(%x: !tdim.tensor<[b: ?, k: ?], bf16>, %w: !tdim.tensor<[j: ?, k: ?], bf16>,
                    %bias: !tdim.tensor<[j: ?], bf16>) -> (%y: !tdim.tensor<[b: ?, j: ?], bf16>) {
  tdim.broadcast ins(%bias : !tdim.tensor<[j: ?], bf16>) outs(%y : !tdim.tensor<[b: ?, j: ?], bf16>)
  tdim.contract ins(%x, %w : !tdim.tensor<[b: ?, k: ?], bf16>, !tdim.tensor<[j: ?, k: ?], bf16>)
      outs(%y : !tdim.tensor<[b: ?, j: ?], bf16>) accumulate
  tdim.return
}
