import { describe, expect, it } from 'vitest';
import type { TransitParameters } from '../../model/index.ts';
import { renderTransitSvg } from './transit-svg.ts';

const base: TransitParameters = { lanes: 32, peakRequestsPerCycle: 1, latencyCycles: 100, intensityCyclesPerRequest: 20, threads: 1024 };

// Minimal XML well-formedness check: tags nest and close, attributes are quoted, entities are known.
function checkWellFormedXml(text: string): string[] {
  const names: string[] = [];
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|<!--[\s\S]*?-->/g;
  let last = 0;
  for (let m = tag.exec(text); m !== null; m = tag.exec(text)) {
    const between = text.slice(last, m.index);
    if (/[<>]/.test(between)) throw new Error(`stray markup near offset ${last}: ${between.slice(0, 40)}`);
    if (/&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(between)) throw new Error(`bad entity near offset ${last}`);
    last = tag.lastIndex;
    if (m[0].startsWith('<!--')) continue;
    const [, closing, name, , selfClosing] = m as unknown as [string, string, string, string, string];
    if (closing) {
      if (stack.pop() !== name) throw new Error(`</${name}> closes the wrong element`);
    } else {
      names.push(name);
      if (!selfClosing) stack.push(name);
    }
  }
  if (/[<>]/.test(text.slice(last))) throw new Error('stray markup at the end');
  if (stack.length > 0) throw new Error(`unclosed: ${stack.join(', ')}`);
  return names;
}

describe('renderTransitSvg', () => {
  it('is well-formed and draws both curves, the point and the class', () => {
    const svg = renderTransitSvg(base);
    const names = checkWellFormedXml(svg);
    expect(names[0]).toBe('svg');
    expect(svg).toContain('id="memory-supply"');
    expect(svg).toContain('id="compute-demand"');
    expect(svg).toContain('id="operating-point"');
    expect(svg).toMatch(/id="bound-class"[^>]*><tspan[^>]*>memory-bound</);
    expect(svg).not.toContain('shifted-operating-point');
  });
  it('adds the loss curve and the shifted point when H > 1', () => {
    const svg = renderTransitSvg({ ...base, intensityCyclesPerRequest: 32, loss: 2 });
    checkWellFormedXml(svg);
    expect(svg).toContain('id="compute-demand-loss"');
    expect(svg).toContain('id="shifted-operating-point"');
    expect(svg).toContain('capacity-bound');
    expect(svg).toContain('with H=2: compute-bound');
  });
  it('places the operating point on the memory-supply polyline', () => {
    const svg = renderTransitSvg({ ...base, threads: 24 });
    const points = (/id="memory-supply"[^>]*points="([^"]+)"/.exec(svg)?.[1] ?? '').split(' ').map((p) => p.split(',').map(Number) as [number, number]);
    const cx = Number(/id="operating-point" cx="([^"]+)"/.exec(svg)?.[1]);
    const cy = Number(/id="operating-point"[^>]*cy="([^"]+)"/.exec(svg)?.[1]);
    const [a, b] = points as [[number, number], [number, number]];
    const yOnLine = a[1] + ((cx - a[0]) / (b[0] - a[0])) * (b[1] - a[1]);
    expect(Math.abs(yOnLine - cy)).toBeLessThan(0.02);
  });
  it('escapes text it did not write itself', () => {
    const svg = renderTransitSvg(base, { title: 'a < b & "c"' });
    checkWellFormedXml(svg);
    expect(svg).toContain('a &lt; b &amp; &quot;c&quot;');
  });
  it('catches malformed XML (the checker can fail)', () => {
    expect(() => checkWellFormedXml('<svg><g></svg>')).toThrow();
    expect(() => checkWellFormedXml('<svg>a & b</svg>')).toThrow();
  });
});
