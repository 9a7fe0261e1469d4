//===- ProducerWarps.cpp - a warp-specialized tiled contraction -----------===//
//
// A wgmma tiling with producer warps: the block's last warpgroup only
// copies the operand tiles and the others only multiply, each side walking
// k on its own, synchronized through two mbarriers a stage (its copies have
// landed; its tiles have been read). No warp waits on the whole block
// between tiles, and no multiplying warp spends issue slots or registers on
// copies. The barriers are NVVM's on the ring's own shared memory, since
// cp.async's completion must arrive on them (cp.async.mbarrier.arrive),
// which nvgpu's barrier groups do not offer.
//
//===----------------------------------------------------------------------===//

#include "ContractKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace nerve::gpumap_to_gpu {

namespace {
/// mbarrier.try_wait's suspend-time hint (ns): the waiting warps sleep
/// rather than spin between checks.
constexpr int64_t kWaitHintNs = 0x989680;

Value i32Of(const Ix &x, Value index) {
  return arith::IndexCastUIOp::create(x.b, x.loc, x.b.getI32Type(), index);
}

/// Waits until the barrier at `at` has completed the phase of parity
/// `parity` (0 or 1, an index).
void waitParity(const Ix &x, Value at, Value parity) {
  Value hint = arith::ConstantIntOp::create(x.b, x.loc, x.b.getI32Type(), kWaitHintNs);
  NVVM::MBarrierTryWaitParityOp::create(x.b, x.loc, at, i32Of(x, parity), hint);
}
} // namespace

/// The mbarrier of `stage` that says its copies have landed (`landed`,
/// awaited by the multiplying warps) or its tiles have been read
/// (`released`, awaited by the producer): after the ring, all `landed`
/// then all `released`.
Value ContractKernel::stageBarrier(const Ix &x, StageBarrier which, Value stage) {
  int64_t first = which == StageBarrier::landed ? 0 : t.getStages();
  Value offset = x.mul(x.add(stage, first), nerve::gpumap::kBarrierBytes);
  Value address = x.add(x.add(sharedAddress, ringBytes()), offset);
  Value i64 = arith::IndexCastUIOp::create(x.b, x.loc, x.b.getI64Type(), address);
  auto shared = LLVM::LLVMPointerType::get(x.b.getContext(), 3);
  return LLVM::IntToPtrOp::create(x.b, x.loc, shared, i64);
}

/// The barriers initialized by thread 0 (a stage has landed when every
/// producer thread's copies have; it is released when every multiplying
/// warp has read it), published by a block-wide barrier; then each
/// warpgroup takes its part. No setmaxnreg: ptxas allocates every thread
/// within the launch's bound (168 registers at 384 threads) whatever
/// setmaxnreg.inc asks, so lowering the producer's only made it spill.
void ContractKernel::specializedBody(OpBuilder &b) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  int64_t producerThreads = t.getProducerWarps() * kWarp;
  auto first = scf::IfOp::create(b, loc, x.lt(tid, x.c(1)), false);
  {
    OpBuilder fb = OpBuilder::atBlockBegin(&first.getThenRegion().front());
    Ix fx{fb, loc};
    auto count = [&](int64_t n) {
      return arith::ConstantIntOp::create(fb, loc, fb.getI32Type(), n);
    };
    for (int64_t s = 0; s < t.getStages(); ++s) {
      NVVM::MBarrierInitOp::create(fb, loc, stageBarrier(fx, StageBarrier::landed, fx.c(s)),
                                   count(producerThreads), Value());
      NVVM::MBarrierInitOp::create(fb, loc, stageBarrier(fx, StageBarrier::released, fx.c(s)),
                                   count(threads / kWarp), Value());
    }
  }
  gpu::BarrierOp::create(b, loc);
  auto role = scf::IfOp::create(b, loc, x.lt(tid, x.c(threads)), true);
  OpBuilder cb = OpBuilder::atBlockBegin(&role.getThenRegion().front());
  storeOutput(cb, consume(cb));
  OpBuilder pb = OpBuilder::atBlockBegin(&role.getElseRegion().front());
  copyTid = Ix{pb, loc}.sub(tid, Ix{pb, loc}.c(threads));
  copyThreads = producerThreads;
  loopCopies = true;
  produce(pb);
}

/// The producer's walk: at each tile, once the multiplying warps have
/// released its stage (a whole ring ago), the tile's copies, whose landing
/// this thread's arrival on the stage's `landed` barrier then tracks
/// (cp.async's own arrival; after element copies, a plain one, which
/// releases them). Its last copies are waited for before it exits.
void ContractKernel::produce(OpBuilder &b) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  Value numK = kTiles(x);
  int64_t stages = t.getStages();
  auto loop = scf::ForOp::create(b, loc, x.c(0), numK, x.c(1));
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  Ix lx{lb, loc};
  Value kt = loop.getInductionVar();
  Value stage = lx.rem(kt, stages);
  auto reused = scf::IfOp::create(
      lb, loc, arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::uge, kt, lx.c(stages)),
      false);
  {
    OpBuilder rb = OpBuilder::atBlockBegin(&reused.getThenRegion().front());
    Ix rx{rb, loc};
    // Released for the tile a ring ago: that phase's parity.
    waitParity(rx, stageBarrier(rx, StageBarrier::released, stage),
               rx.rem(rx.add(rx.div(kt, stages), 1), 2));
  }
  Value yes = arith::ConstantOp::create(lb, loc, lb.getBoolAttr(true));
  issueStage(lb, kt, stage, yes);
  Value landed = stageBarrier(lx, StageBarrier::landed, stage);
  auto byCopies = scf::IfOp::create(lb, loc, aligned, true);
  OpBuilder ab = OpBuilder::atBlockBegin(&byCopies.getThenRegion().front());
  NVVM::CpAsyncMBarrierArriveOp::create(ab, loc, landed, /*noinc=*/true);
  OpBuilder eb = OpBuilder::atBlockBegin(&byCopies.getElseRegion().front());
  NVVM::MBarrierArriveOp::create(eb, loc, Type(), landed, Value());
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
}

/// The multiplying warps' walk: at each tile, once its stage has landed,
/// its products issued (the previous tile's then known done), and the
/// previous tile's stage released to the producer. Returns the
/// accumulators, in accumulatorPlaces' order.
SmallVector<Value> ContractKernel::consume(OpBuilder &b) {
  Location loc = op.getLoc();
  Ix x{b, loc};
  Value numK = kTiles(x);
  int64_t stages = t.getStages();
  auto accType = warpgroupAccumulators(b.getContext(), t.getTileN());
  Value zero = LLVM::ZeroOp::create(b, loc, accType);
  auto loop = scf::ForOp::create(b, loc, x.c(0), numK, x.c(1), ValueRange{zero});
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  Ix lx{lb, loc};
  Value kt = loop.getInductionVar();
  Value stage = lx.rem(kt, stages);
  waitParity(lx, stageBarrier(lx, StageBarrier::landed, stage), lx.rem(lx.div(kt, stages), 2));
  // The copies wrote through the generic proxy, wgmma reads through the
  // async one: ordered after the barrier made them visible to this thread.
  NVVM::FenceProxyOp::create(
      lb, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(lb.getContext(), NVVM::SharedSpace::shared_cta));
  Value acc = warpgroupStage(lb, stage, loop.getRegionIterArgs()[0]);
  // One arrival a warp: wgmma.wait_group is warp-wide, so lane 0 knows the
  // warp's reads of the stage are done.
  Value releases = lx.andI(lx.lt(lx.c(0), kt), lx.lt(lane, lx.c(1)));
  auto previous = scf::IfOp::create(lb, loc, releases, false);
  {
    OpBuilder pb = OpBuilder::atBlockBegin(&previous.getThenRegion().front());
    Ix px{pb, loc};
    Value before = px.rem(px.add(kt, stages - 1), stages);
    NVVM::MBarrierArriveOp::create(pb, loc, Type(),
                                   stageBarrier(px, StageBarrier::released, before), Value());
  }
  scf::YieldOp::create(lb, loc, ValueRange{acc});
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return unpackAccumulators(b, loc, loop.getResult(0), t.getTileN());
}

} // namespace nerve::gpumap_to_gpu
