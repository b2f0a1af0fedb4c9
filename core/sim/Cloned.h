#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace blkmq {

// An owning pointer to a polymorphic part whose owner's copy copies it too (T::clone()): what lets
// the engine's components be copied member by member (Engine::clone).
template<class T>
class Cloned {
public:
    Cloned() = default;
    explicit Cloned(std::unique_ptr<T> p)
        : m_p(std::move(p))
    {
    }
    Cloned(const Cloned& o)
        : m_p(o.m_p ? o.m_p->clone() : nullptr)
    {
    }
    Cloned(Cloned&&) noexcept = default;
    Cloned& operator=(Cloned o) noexcept
    {
        m_p = std::move(o.m_p);
        return *this;
    }
    ~Cloned() = default;

    T* get() const { return m_p.get(); }
    T& operator*() const { return *m_p; }
    T* operator->() const { return m_p.get(); }
    explicit operator bool() const { return m_p != nullptr; }

private:
    std::unique_ptr<T> m_p;
};

// Heap bytes a vector holds: what a copy of it costs (Engine::stateBytes, a checkpoint's size).
template<class T>
std::size_t heapBytes(const std::vector<T>& v)
{
    return v.capacity() * sizeof(T);
}
inline std::size_t heapBytes(const std::vector<bool>& v) { return v.capacity() / 8; }

} // namespace blkmq
