#pragma once

#include <QObject>
#include <QThread>

#include <algorithm>
#include <vector>

namespace blkmq {

// Threads that work off the GUI thread (trace exports, seed comparisons), each deleted once it has
// finished; the owner's destructor waits for those still running, so a file being written is finished.
class Workers {
public:
    explicit Workers(QObject* owner)
        : m_owner(owner)
    {
    }
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;
    ~Workers()
    {
        for (QThread* t : m_running)
            t->wait();
    }

    void start(QThread* worker)
    {
        QObject::connect(worker, &QThread::finished, worker, &QObject::deleteLater);
        m_running.push_back(worker);
        QObject::connect(worker, &QObject::destroyed, m_owner, [this, worker] {
            m_running.erase(std::remove(m_running.begin(), m_running.end(), worker), m_running.end());
        });
        worker->start();
    }

private:
    QObject* m_owner;
    std::vector<QThread*> m_running;
};

} // namespace blkmq
