import { afterEach, expect, test, vi } from 'vitest';
import { HeartbeatWheel } from './heartbeat-wheel';

afterEach(() => {
  vi.useRealTimers();
});

function member(log: number[], name: number) {
  return { beat: () => log.push(name) };
}

test('each member is beaten once per period, first within a period of joining', () => {
  vi.useFakeTimers();
  const wheel = new HeartbeatWheel(1600);
  const beats: number[] = [];
  const a = member(beats, 1);
  wheel.add(a);
  vi.advanceTimersByTime(1499);
  expect(beats).toEqual([]);
  vi.advanceTimersByTime(101);
  expect(beats).toEqual([1]);
  // Joins 500 ms into a's period: beaten between 1500 and 1600 ms later.
  vi.advanceTimersByTime(500);
  const b = member(beats, 2);
  wheel.add(b);
  vi.advanceTimersByTime(1499);
  expect(beats).toEqual([1, 1]);
  vi.advanceTimersByTime(101);
  expect(beats).toEqual([1, 1, 2]);
  vi.advanceTimersByTime(1600 * 3);
  expect(beats.filter((x) => x === 1)).toHaveLength(5);
  expect(beats.filter((x) => x === 2)).toHaveLength(4);
});

test('a removed member is not beaten again, and the timer stops with the last member', () => {
  vi.useFakeTimers();
  const wheel = new HeartbeatWheel(1600);
  const beats: number[] = [];
  const a = member(beats, 1);
  wheel.add(a);
  wheel.add(a);
  expect(wheel.size).toBe(1);
  vi.advanceTimersByTime(1600);
  wheel.remove(a);
  expect(wheel.size).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
  vi.advanceTimersByTime(1600 * 3);
  expect(beats).toEqual([1]);
});

test('a member that leaves during its beat (its socket closed) does not stop the others in its slot', () => {
  vi.useFakeTimers();
  const wheel = new HeartbeatWheel(1600);
  const beats: number[] = [];
  const leaving = { beat: () => wheel.remove(leaving) };
  wheel.add(leaving);
  wheel.add(member(beats, 2));
  vi.advanceTimersByTime(1600 * 2);
  expect(beats).toEqual([2, 2]);
  expect(wheel.size).toBe(1);
});

test('a fleet is spread over the period rather than beaten at once', () => {
  vi.useFakeTimers();
  const wheel = new HeartbeatWheel(1600);
  const beats: number[] = [];
  for (let i = 0; i < 160; i++) {
    wheel.add(member(beats, i));
    vi.advanceTimersByTime(10);
  }
  beats.length = 0;
  vi.advanceTimersByTime(100);
  expect(beats.length).toBe(10);
});
