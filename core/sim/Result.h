#pragma once

#include <string>
#include <utility>
#include <variant>

namespace blkmq {

// Either a value or a one-line error message that names the offending field.
template<typename T>
class Result {
public:
    Result(T value)
        : m_v(std::move(value))
    {
    }
    static Result failure(std::string message) { return Result(Error { std::move(message) }); }

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() { return std::get<0>(m_v); }
    const T& value() const { return std::get<0>(m_v); }
    T& operator*() { return value(); }
    const T& operator*() const { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    const std::string& error() const { return std::get<1>(m_v).message; }

private:
    struct Error {
        std::string message;
    };
    explicit Result(Error e)
        : m_v(std::move(e))
    {
    }
    std::variant<T, Error> m_v;
};

} // namespace blkmq
