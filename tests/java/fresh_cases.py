#!/usr/bin/env python3
"""Fresh conformance cases: random inputs like those of tests/data/allocate-java.jsonl,
with expected results computed by the unchanged RocketMQ Java strategies.

    python3 tests/java/fresh_cases.py SEED COUNT [--edge] [--classes DIR] > fresh.jsonl

--edge adds corner cases the shipped sample does not have (odd machine-room
separators, negative and large queue ids, look-alike client ids). The classes
come from tests/java/build.sh (default target/java-harness). Check the crate
against them with `rebalance allocate --cases fresh.jsonl --check`.
"""
import argparse
import json
import os
import random
import subprocess
import sys

SUFFIXES = ['Z', 'é', '😀', '_', '中', 'a', '！']  # UTF-16 order differs from UTF-8 order here
ROOMS = ['bj', 'hz', 'sh', 'sz']
STRATEGIES = ['AVG', 'AVG_BY_CIRCLE', 'CONSISTENT_HASH', 'MACHINE_ROOM', 'MACHINE_ROOM_NEARBY']


def suffix(rng, p):
    return rng.choice(SUFFIXES) if rng.random() < p else ''


def broker_name(rng, family, edge):
    """Plain names, MACHINE_ROOM's `room@broker` or MACHINE_ROOM_NEARBY's `room-broker`."""
    broker = 'broker-' + rng.choice('abcd') + suffix(rng, 0.2)
    room = rng.choice(ROOMS)
    if family == 'plain':
        return broker
    if family == 'at':
        forms = [room + '@' + broker] * 6 + ['@' + broker, room + '@@' + broker, room + '@', room + '@' + broker + '@x']
        if edge:
            forms += ['@', '@@', room + '@' + broker + '@', '@' + broker + '@', room + '@' + broker + '@@', '', broker,
                      room + '-' + broker]
        return rng.choice(forms)
    forms = [room + '-' + broker] * 24 + ['-' + broker, room + '-', room + '-']
    if edge:
        forms += ['-', '--', '--' + broker, room + '--' + broker, broker + '-', '', room + '@' + broker, room]
    return rng.choice(forms)


def queues(rng, strategy, edge):
    if rng.random() < 0.12:
        return []
    family = {'MACHINE_ROOM': 'at', 'MACHINE_ROOM_NEARBY': 'dash'}.get(strategy, 'plain')
    if rng.random() < 0.12:
        family = rng.choice(['plain', 'at', 'dash'])
    topic_count = rng.choice([1, 1, 1, 2, 2]) if rng.random() < 0.85 else rng.randint(3, 8)
    broker_count = rng.choice([1, 1, 2, 2, 3, 4]) if rng.random() < 0.9 else rng.randint(1, 6)
    bases = ['Topic0', 'Topic1'] if rng.random() < 0.7 else ['Topic0']
    topics = list(dict.fromkeys(
        rng.choice(bases) + suffix(rng, 0.3 if topic_count > 2 else 0.15) for _ in range(topic_count)))
    brokers = list(dict.fromkeys(broker_name(rng, family, edge) for _ in range(broker_count)))
    size = rng.randint(20, 180) if rng.random() < 0.1 else rng.randint(1, 22)
    queue_ids = list(range(16))
    if edge and rng.random() < 0.3:
        queue_ids = list(range(-3, 3)) + rng.sample(range(16, 100000), 10)
    pool = [(t, b, q) for t in topics for b in brokers for q in queue_ids]
    chosen = rng.sample(pool, min(size, len(pool)))
    if rng.random() < 0.1:
        chosen.sort()  # already in an order, though not Java's
    return [{'topic': t, 'broker': b, 'queue_id': q} for t, b, q in chosen]


def client_id(rng, strategy, edge):
    cid = '10.0.%d.%d@%d' % (rng.randint(0, 3), rng.randint(0, 255), rng.randint(1000, 9999)) + suffix(rng, 0.08)
    if strategy == 'MACHINE_ROOM_NEARBY' and rng.random() < 0.9 or rng.random() < 0.03:
        cid = rng.choice(ROOMS) + '-' + cid
    if edge and rng.random() < 0.05:
        cid = rng.choice(['', '-', '-' + cid, '--', cid + '-', rng.choice(ROOMS) + '-', rng.choice(ROOMS)])
    return cid


def case(rng, edge):
    strategy = rng.choice(STRATEGIES)
    c = {'strategy': strategy, 'sort': rng.random() < 0.5}
    if strategy == 'CONSISTENT_HASH':
        c['virtual_nodes'] = 10 if rng.random() < 0.7 else rng.randint(0, 30)
    if strategy == 'MACHINE_ROOM':
        idcs = rng.sample(ROOMS, rng.randint(0, 4))
        if edge and rng.random() < 0.2:
            idcs.append(rng.choice(['', 'broker-a', 'bj-broker-a']))
        c['consumer_idcs'] = sorted(set(idcs))
    c['queues'] = queues(rng, strategy, edge)
    ids = []
    if rng.random() >= 0.09:
        ids = [client_id(rng, strategy, edge) for _ in range(rng.randint(1, 13) if rng.random() < 0.9 else rng.randint(14, 60))]
        if rng.random() < 0.08:
            for _ in range(rng.choice([1, 1, 1, 2])):
                ids.insert(rng.randint(0, len(ids)), rng.choice(ids))
    c['consumers'] = ids
    callers = list(dict.fromkeys(ids))
    if rng.random() < 0.13:
        callers.append(rng.choice(['10.9.9.9@stranger', '10.0.0.1@1', 'bj-10.9.9.9@stranger', '10.9.9.9@stranger😀']
                                  + [x + 'Z' for x in ids[:1]]))
    if rng.random() < 0.05:
        callers.append('')
    if edge and rng.random() < 0.1 and ids:
        callers.append(rng.choice(ids).upper() + ' ')
    c['results'] = [{'current': x} for x in callers]
    return c


def hexed(s):
    return s.encode('utf-8').hex() if s else '-'


def runner_line(c):
    """The case in Runner.java's input format."""
    t = [c['strategy'], '1' if c['sort'] else '0', str(c.get('virtual_nodes', 10))]
    idcs = c.get('consumer_idcs', [])
    t += [str(len(idcs))] + [hexed(x) for x in idcs]
    t.append(str(len(c['queues'])))
    for q in c['queues']:
        t += [hexed(q['topic']), hexed(q['broker']), str(q['queue_id'])]
    t += [str(len(c['consumers']))] + [hexed(x) for x in c['consumers']]
    t += [str(len(c['results']))] + [hexed(r['current']) for r in c['results']]
    return ' '.join(t)


def result(current, answer):
    if answer.startswith('E '):
        message = answer[2:]
        return {'current': current, 'error': '' if message == '-' else bytes.fromhex(message).decode('utf-8')}
    positions = answer[2:]
    return {'current': current, 'queues': [int(x) for x in positions.split(',')] if positions else []}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('seed', type=int)
    parser.add_argument('count', type=int)
    parser.add_argument('--edge', action='store_true', help='add corner cases beyond the sample')
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument('--classes', default=os.path.join(here, '..', '..', 'target', 'java-harness'))
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.classes, 'Runner.class')):
        sys.exit('no Runner.class in %s: run tests/java/build.sh ROCKETMQ_CHECKOUT first' % args.classes)

    rng = random.Random(args.seed)
    cases = [case(rng, args.edge) for _ in range(args.count)]
    java = subprocess.run(['java', '-cp', args.classes, 'Runner'],
                          input=''.join(runner_line(c) + '\n' for c in cases),
                          capture_output=True, text=True, encoding='utf-8', check=True)
    answers = java.stdout.split('\n')[:len(cases)]
    if len(answers) != len(cases):
        sys.exit('Runner answered %d of %d cases' % (len(answers), len(cases)))
    for c, line in zip(cases, answers):
        parts = line.split('\t') if c['results'] else []
        if len(parts) != len(c['results']):
            sys.exit('Runner answered %d of %d calls of a case' % (len(parts), len(c['results'])))
        c['results'] = [result(r['current'], a) for r, a in zip(c['results'], parts)]
        sys.stdout.write(json.dumps(c, ensure_ascii=False, separators=(',', ':')) + '\n')


if __name__ == '__main__':
    main()
