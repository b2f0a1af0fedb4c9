#pragma once

#include <nlohmann/json.hpp>

#include <QGraphicsView>

class QLabel;
class QToolBar;

namespace blkmq {

class TopologyScene;

// The canvas: the topology scene, fitted to the view until the user zooms (Ctrl+wheel, Ctrl++ and
// Ctrl+-), and fitted again on F.
class CanvasView : public QGraphicsView {
    Q_OBJECT
public:
    explicit CanvasView(TopologyScene* scene, QWidget* parent = nullptr);

    // Fit (F) on the toolbar; Zoom in (Ctrl++, Ctrl+=) and Zoom out (Ctrl+-) on `window`'s keys.
    void addActions(QWidget* window, QToolBar* tb);
    void fit(); // the whole machine in view
    void zoom(double factor); // around the pointer; kept on a resize
    void zoomAtCentre(double factor); // Ctrl++ and Ctrl+-: around the middle of the view
    bool zoomed() const { return m_zoomed; }
    // A session file's view: {"zoom", "center"} once zoomed, else nothing; restore() takes it back.
    void saveTo(nlohmann::json& view) const;
    void restore(const nlohmann::json& view);
    // Under the canvas: the key to its colours and marks, with what it counts now.
    QLabel* legend() const { return m_legend; }
    void refreshLegend(bool lessonOpen);
    // Which compared run the canvas draws, for the legend ("" while it draws run A, as loaded).
    void setRunShown(const QString& run) { m_runShown = run; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    void fitToSize(); // unless zoomed: the scene laid out for the viewport's size, and fitted
    TopologyScene* m_scene;
    QLabel* m_legend;
    QString m_runShown;
    bool m_zoomed = false; // the user zoomed: a resize keeps the zoom instead of fitting
};

} // namespace blkmq
