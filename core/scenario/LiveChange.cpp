#include "scenario/LiveChange.h"

#include "io/Text.h"
#include "sim/Duration.h"

#include <algorithm>
#include <charconv>

namespace blkmq {

namespace {

const std::string kDevices = "devices.";
const std::string kRqAffinity = ".rq_affinity";

// A value as --set takes it: JSON's quotes around a string are optional ("own-hctx" or "\"own-hctx\"").
std::string unquoted(const std::string& v)
{
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
        return v.substr(1, v.size() - 2);
    return v;
}

std::optional<std::int64_t> integer(const std::string& v)
{
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size())
        return std::nullopt;
    return n;
}

std::string got(const std::string& v) { return " (got " + printable(v, 60) + ")"; }

// The cost row and, for a table entry, the distance that `path` (below "costs.") names.
struct CostPath {
    std::size_t row = 0;
    int distance = -1; // -1: a scalar cost
};

std::optional<CostPath> costPath(const std::string& below)
{
    const auto dot = below.find('.');
    const std::string name = below.substr(0, dot);
    const auto& params = Costs::params();
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (name != params[i].name)
            continue;
        if (params[i].scalar)
            return dot == std::string::npos ? std::optional<CostPath>(CostPath { i, -1 }) : std::nullopt;
        if (dot == std::string::npos)
            return std::nullopt;
        const std::string dist = below.substr(dot + 1);
        for (int d = 0; d < kDistanceClasses; ++d)
            if (dist == distanceName(static_cast<Distance>(d)))
                return CostPath { i, d };
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace

LiveChange LiveChange::refuse(const Command& c, std::string why)
{
    LiveChange out;
    out.m_command = c;
    out.m_refused = std::move(why);
    return out;
}

bool LiveChange::isLivePath(const std::string& path)
{
    if (path.rfind("costs.", 0) == 0)
        return costPath(path.substr(6)).has_value();
    if (path.rfind("kernel.", 0) == 0) {
        const KernelSwitch* sw = KernelSwitches::find(path);
        return sw && sw->live;
    }
    return path.size() > kDevices.size() + kRqAffinity.size() && path.rfind(kDevices, 0) == 0
        && path.compare(path.size() - kRqAffinity.size(), kRqAffinity.size(), kRqAffinity) == 0;
}

LiveChange LiveChange::read(const Command& c)
{
    const std::string& path = c.path;
    const std::string value = unquoted(c.value);
    if (!isLivePath(path)) {
        if (path.rfind("costs.", 0) == 0)
            return refuse(c,
                printable(path, 120)
                    + ": not a cost, or a cost table given whole (set one entry: costs.NAME.self, smt, llc, node "
                      "or remote; blkmqlab-cli costs)");
        return refuse(c, printable(path, 120) + " cannot change during a run");
    }
    LiveChange out;
    out.m_command = c;
    if (path.rfind("kernel.", 0) == 0) {
        const KernelSwitch* sw = KernelSwitches::find(path);
        out.m_target = Target::Switch;
        out.m_switch = sw;
        switch (sw->type) {
        case KernelSwitch::Type::Bool:
            if (value != "true" && value != "false")
                return refuse(c, sw->path() + ": must be true or false" + got(c.value));
            out.m_flag = value == "true";
            break;
        case KernelSwitch::Type::Choice: {
            const std::vector<std::string> names = sw->choiceNames();
            if (std::find(names.begin(), names.end(), value) == names.end()) {
                std::string list;
                for (const auto& n : names)
                    list += (list.empty() ? "" : ", ") + n;
                return refuse(c, sw->path() + ": must be one of " + list + got(c.value));
            }
            out.m_choice = value;
            break;
        }
        case KernelSwitch::Type::Duration: {
            std::optional<SimTime> t = parseDuration(value);
            if (const auto ns = integer(value); ns && *ns >= 0)
                t = SimTime(*ns);
            if (!t || *t < SimTime(0))
                return refuse(c,
                    sw->path() + ": must be a duration >= 0 (nanoseconds, or a string with ns/us/ms/s such as \"10ms\")"
                        + got(c.value));
            out.m_duration = *t;
            break;
        }
        }
        return out;
    }
    if (path.rfind("costs.", 0) == 0) {
        const CostPath where = *costPath(path.substr(6));
        out.m_target = where.distance < 0 ? Target::Cost : Target::CostEntry;
        out.m_cost = where.row;
        out.m_distance = std::max(where.distance, 0);
        const auto ns = integer(value);
        if (!ns || *ns < 0 || *ns > Costs::kMost)
            return refuse(
                c, printable(path, 120) + ": must be an integer in 0.." + std::to_string(Costs::kMost) + got(c.value));
        out.m_number = *ns;
        return out;
    }
    out.m_target = Target::RqAffinity;
    out.m_device = path.substr(kDevices.size(), path.size() - kDevices.size() - kRqAffinity.size());
    const auto n = integer(value);
    if (!n || *n < 0 || *n > 2)
        return refuse(c, printable(path, 120) + ": must be an integer in 0..2" + got(c.value));
    out.m_number = *n;
    return out;
}

Result<bool> LiveChange::applyTo(Scenario& s) const
{
    using R = Result<bool>;
    switch (m_target) {
    case Target::Refused:
        return R::failure(m_refused);
    case Target::Switch: {
        KernelSpec k = s.kernel;
        switch (m_switch->type) {
        case KernelSwitch::Type::Bool:
            m_switch->flag(k) = m_flag;
            break;
        case KernelSwitch::Type::Choice:
            m_switch->setChoice(k, m_choice);
            break;
        case KernelSwitch::Type::Duration:
            m_switch->duration(k) = m_duration;
            break;
        }
        if (const FieldProblem p = KernelSwitches::problem(k, s.devices))
            return R::failure(printable(p.field, 120) + ": " + p.why);
        s.kernel = std::move(k);
        return true;
    }
    case Target::Cost:
    case Target::CostEntry: {
        Costs costs = s.costs;
        const Costs::Param& p = Costs::params()[m_cost];
        if (m_target == Target::Cost)
            costs.*(p.scalar) = m_number;
        else
            (costs.*(p.table))[static_cast<std::size_t>(m_distance)] = m_number;
        if (const FieldProblem problem = costs.problem())
            return R::failure(problem.field + ": " + problem.why);
        s.costs = costs;
        return true;
    }
    case Target::RqAffinity: {
        const bool index = !m_device.empty() && m_device.size() <= 9
            && std::all_of(m_device.begin(), m_device.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
        // As --set addresses the file: an entry by index or name, every device an nr_devices entry makes.
        bool found = false;
        for (DeviceSpec& d : s.devices) {
            if (index ? d.entry == std::stoi(m_device) : d.entryName == m_device) {
                d.rq_affinity = static_cast<int>(m_number);
                found = true;
            }
        }
        if (found)
            return true;
        return R::failure(printable(m_command.path, 120) + ": the scenario has no device " + printable(m_device, 60));
    }
    }
    return R::failure(m_refused);
}

} // namespace blkmq
