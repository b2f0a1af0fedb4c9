#pragma once

#include "sim/EnumNames.h"

#include <cstdint>
#include <iterator>
#include <vector>

namespace blkmq {

// One step of work on a CPU. Ops live on per-context stacks (hardirq,
// softirq, and one per task); the top op runs next. An op that loops pushes
// itself back; an op with follow-up work pushes it in reverse order.
//
// Each component numbers its own ops (MachineOp, BlockOp, WorkloadOp): `owner`
// is the handler the Machine registered for that component (0 = the Machine
// itself), `code` the component's op. The Machine knows none of the others' ops.
struct Op {
    std::uint8_t owner = 0;
    std::uint8_t code = 0;
    std::int32_t a = 0;
    std::int32_t b = 0;
    template<class Hash>
    void hashState(Hash& h) const
    {
        h(owner, code, a, b);
    }
};

using OpStack = std::vector<Op>;

// A component's ops, typed: ops(BlockOp::RunHctx, h) builds one, OpSet<BlockOp>::code(op) reads it back.
template<class Code>
class OpSet {
public:
    OpSet() = default;
    explicit OpSet(std::uint8_t owner)
        : m_owner(owner)
    {
    }
    Op operator()(Code c, std::int32_t a = 0, std::int32_t b = 0) const
    {
        return { m_owner, static_cast<std::uint8_t>(c), a, b };
    }
    static Code code(Op op) { return static_cast<Code>(op.code); }

private:
    std::uint8_t m_owner = 0;
};

enum class IrqKind : std::uint8_t { DeviceVector, CallFunction, Timer, NicRx, Usb, RdmaCq, AhciHba /* last */ };
inline constexpr int kIrqKinds = static_cast<int>(IrqKind::AhciHba) + 1;
// What the log and the inspector call each kind: the kernel's vector or the device's interrupt.
inline constexpr const char* kIrqKindNames[] = { "device vector", "CALL_FUNCTION_VECTOR (IPI)", "LOCAL_TIMER_VECTOR",
    "NIC rx vector", "USB host controller", "RDMA completion vector", "mtip32xx HBA (MSI)" };
static_assert(std::size(kIrqKindNames) == kIrqKinds);
inline const char* irqKindName(int kind) { return kind >= 0 ? enumName(kIrqKindNames, kind) : "?"; }

enum SoftirqNr : std::uint8_t {
    HI_SOFTIRQ,
    TIMER_SOFTIRQ,
    NET_TX_SOFTIRQ,
    NET_RX_SOFTIRQ,
    BLOCK_SOFTIRQ,
    IRQ_POLL_SOFTIRQ,
    NR_SOFTIRQS_MODELLED
};
// softirq_to_name[] of kernel/softirq.c, for the softirqs modelled.
inline constexpr const char* kSoftirqNames[] = { "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL" };
static_assert(std::size(kSoftirqNames) == NR_SOFTIRQS_MODELLED);
inline const char* softirqName(int nr) { return nr >= 0 ? enumName(kSoftirqNames, nr) : "?"; }

} // namespace blkmq
