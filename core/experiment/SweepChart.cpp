#include "experiment/SweepChart.h"

#include "io/Limits.h"
#include "io/Text.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace blkmq {

nlohmann::json toJson(const SweepChart& chart)
{
    nlohmann::json lines = nlohmann::json::array();
    for (const SweepChartLine& l : chart.lines)
        lines.push_back({ { "label", l.label }, { "x", l.x }, { "mean", l.mean }, { "min", l.min }, { "max", l.max } });
    return { { "title", chart.title }, { "x_label", chart.xLabel }, { "y_label", chart.yLabel },
        { "x_ticks", chart.xTicks }, { "seeds", chart.seeds }, { "lines", std::move(lines) } };
}

Result<SweepChart> sweepChartFromJson(const nlohmann::json& j)
{
    using R = Result<SweepChart>;
    if (!j.is_object())
        return R::failure("a chart is an object with title, x_label, y_label, x_ticks, seeds and lines");
    if (const std::string why = jsonTextProblem(j, {}); !why.empty())
        return R::failure(why);
    SweepChart c;
    for (const auto& [key, target] : { std::pair<const char*, std::string*> { "title", &c.title },
             { "x_label", &c.xLabel }, { "y_label", &c.yLabel } }) {
        if (!j.contains(key) || !j[key].is_string())
            return R::failure(std::string(key) + ": a string is required");
        *target = j[key].get<std::string>();
    }
    if (!j.contains("seeds") || !j["seeds"].is_number_integer() || j["seeds"].get<std::int64_t>() < 1
        || j["seeds"].get<std::int64_t>() > limits::kSweepValues)
        return R::failure("seeds: a whole number from 1 to " + std::to_string(limits::kSweepValues));
    c.seeds = j["seeds"].get<int>();
    if (!j.contains("x_ticks") || !j["x_ticks"].is_array() || j["x_ticks"].size() > limits::kSweepValues)
        return R::failure("x_ticks: a list of at most " + std::to_string(limits::kSweepValues) + " strings");
    for (const auto& t : j["x_ticks"]) {
        if (!t.is_string())
            return R::failure("x_ticks: a list of strings");
        c.xTicks.push_back(t.get<std::string>());
    }
    if (!j.contains("lines") || !j["lines"].is_array() || j["lines"].empty()
        || static_cast<std::int64_t>(j["lines"].size()) > limits::kSweepRunsMax)
        return R::failure("lines: a list of 1 to " + std::to_string(limits::kSweepRunsMax) + " lines");
    std::int64_t points = 0;
    for (std::size_t i = 0; i < j["lines"].size(); ++i) {
        const auto& l = j["lines"][i];
        const std::string where = "lines[" + std::to_string(i) + "]";
        if (!l.is_object() || !l.contains("label") || !l["label"].is_string())
            return R::failure(where + ".label: a string is required");
        SweepChartLine line;
        line.label = l["label"].get<std::string>();
        for (const auto& [key, target] : { std::pair<const char*, std::vector<double>*> { "x", &line.x },
                 { "mean", &line.mean }, { "min", &line.min }, { "max", &line.max } }) {
            if (!l.contains(key) || !l[key].is_array()
                || static_cast<std::int64_t>(l[key].size()) > limits::kSweepValues)
                return R::failure(
                    where + "." + key + ": a list of at most " + std::to_string(limits::kSweepValues) + " numbers");
            for (const auto& v : l[key]) {
                if (!v.is_number() || !std::isfinite(v.get<double>()))
                    return R::failure(where + "." + key + ": finite numbers only");
                target->push_back(v.get<double>());
            }
        }
        if (line.mean.size() != line.x.size() || line.min.size() != line.x.size() || line.max.size() != line.x.size())
            return R::failure(where + ": x, mean, min and max have one entry per point each");
        points += static_cast<std::int64_t>(line.x.size());
        if (points > limits::kSweepRunsMax)
            return R::failure(where + ": more than " + std::to_string(limits::kSweepRunsMax)
                + " points in all, more than a sweep has runs (docs/limits.md)");
        c.lines.push_back(std::move(line));
    }
    return c;
}

} // namespace blkmq
