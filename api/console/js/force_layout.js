// A small force-directed layout: springs on relations, repulsion between every pair, a pull to
// the centre. Run a fixed number of steps once; graphs here are bounded by the API's caps.

const STEPS = 300;
const SPRING_LENGTH = 170;
const SPRING_K = 0.02;
const REPULSION = 40000;
const CENTRE_K = 0.002;
const DAMPING = 0.85;
const MAX_STEP = 12;

/** Positions {id: {x, y}} inside width x height for `nodes` (ids) linked by `links` (source, target). */
export function layout(nodeIds, links, width, height) {
  const points = nodeIds.map((id, i) => {
    const angle = (2 * Math.PI * i) / Math.max(nodeIds.length, 1);
    const radius = Math.min(width, height) / 3;
    return { id, x: width / 2 + radius * Math.cos(angle), y: height / 2 + radius * Math.sin(angle), vx: 0, vy: 0 };
  });
  const index = new Map(points.map((p, i) => [p.id, i]));
  const springs = links.map((l) => [index.get(l.source), index.get(l.target)]).filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
  for (let step = 0; step < STEPS; step += 1) {
    for (let i = 0; i < points.length; i += 1) {
      for (let j = i + 1; j < points.length; j += 1) {
        const a = points[i];
        const b = points[j];
        const dx = a.x - b.x || 0.01;
        const dy = a.y - b.y || 0.01;
        const d2 = dx * dx + dy * dy;
        const f = REPULSION / d2;
        const d = Math.sqrt(d2);
        a.vx += (f * dx) / d; a.vy += (f * dy) / d;
        b.vx -= (f * dx) / d; b.vy -= (f * dy) / d;
      }
    }
    for (const [i, j] of springs) {
      const a = points[i];
      const b = points[j];
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
      const f = SPRING_K * (d - SPRING_LENGTH);
      a.vx += (f * dx) / d; a.vy += (f * dy) / d;
      b.vx -= (f * dx) / d; b.vy -= (f * dy) / d;
    }
    for (const p of points) {
      p.vx = (p.vx + CENTRE_K * (width / 2 - p.x)) * DAMPING;
      p.vy = (p.vy + CENTRE_K * (height / 2 - p.y)) * DAMPING;
      p.x += Math.max(-MAX_STEP, Math.min(MAX_STEP, p.vx));
      p.y += Math.max(-MAX_STEP, Math.min(MAX_STEP, p.vy));
    }
  }
  const margin = 40;
  return Object.fromEntries(points.map((p) => [p.id, {
    x: Math.max(margin, Math.min(width - margin, p.x)),
    y: Math.max(margin / 2, Math.min(height - margin / 2, p.y)),
  }]));
}
