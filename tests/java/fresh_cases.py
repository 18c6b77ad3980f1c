#!/usr/bin/env python3
"""Fresh conformance cases: random inputs like those of tests/data/allocate-java.jsonl,
with expected results computed by the unchanged RocketMQ Java strategies.

    python3 tests/java/fresh_cases.py SEED COUNT [--edge | --client | --bytes] [--classes DIR] > fresh.jsonl

--edge adds corner cases the shipped sample does not have (odd machine-room
separators, negative and large queue ids, look-alike client ids). --client
writes client-level cases like those of tests/data/rebalance-java.jsonl: both
lists sorted first, as RebalanceImpl.rebalanceByTopic sorts them, and names
whose Java order (UTF-16 code units) differs from their UTF-8 byte order. The
classes come from tests/java/build.sh (default target/java-harness). Check the
crate against them with `rebalance allocate --cases fresh.jsonl --check`.
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


# Client-level cases (--client). The characters come in classes whose Java
# order and UTF-8 byte order disagree: a supplementary character is a
# surrogate pair in UTF-16 (0xD800..0xDBFF first), so it sorts after ASCII and
# the BMP below the surrogates but before U+E000..U+FFFF, while its four UTF-8
# bytes sort after all of them.
ASCII = list('09AZ_az~.')
BMP_LOW = ['é', 'ÿ', 'Ā', '中', 'あ', '\ud7ff']  # below the surrogates
BMP_HIGH = ['\ue000', '\uf900', '\uff01', '\uff5e', '\ufffd', '\uffff']  # above them
ASTRAL = ['\U00010000', '\U0001f600', '\U0001f601', '\U00020000', '\U0002a6d6', '\U0010ffff']
CLASSES = [ASCII, BMP_LOW, BMP_HIGH, ASTRAL]
CLIENT_ROOMS = ['bj', 'hz', '机房', 'ｈｚ', 'r\U00020000', 'r\uff01', '\U0001f600', '\ufffd']
VIRTUAL_NODES = [0, 1, 2, 3, 5, 10, 10, 10, 16, 32, 100]


def tricky(rng, count):
    """`count` characters, the non-ASCII classes as likely as ASCII."""
    return ''.join(rng.choice(rng.choice(CLASSES)) for _ in range(count))


def stems(rng, bases):
    """One to three stems: names that ids or brokers share, so that they differ
    in their tails."""
    return list(dict.fromkeys(rng.choice(bases) + tricky(rng, rng.choice([0, 0, 1]))
                              for _ in range(rng.randint(1, 3))))


def client_ids(rng, strategy):
    """A consumer list as findConsumerIdList answers it: distinct ids mostly,
    sharing stems, some prefixes of others, now and then a duplicate."""
    bases = ['10.0.0.%d@' % rng.randint(1, 9), '192.168.1.1@DEFAULT', 'cid', '', 'c\U0001f600', 'c\uff01']
    common = stems(rng, bases)
    count = rng.randint(1, 8) if rng.random() < 0.85 else rng.randint(9, 40)
    ids = []
    while len(ids) < count:
        r = rng.random()
        if ids and r < 0.2:
            cid = rng.choice(ids) + tricky(rng, rng.randint(1, 2))  # a longer id with it as prefix
        elif ids and r < 0.25:
            cid = rng.choice(ids)[:-1]  # a shorter one
        else:
            cid = rng.choice(common) + tricky(rng, rng.randint(1, 3))
        if strategy == 'MACHINE_ROOM_NEARBY' and '-' not in cid:
            cid = rng.choice(CLIENT_ROOMS) + '-' + cid
        if cid:
            ids.append(cid)
    if rng.random() < 0.1:
        for _ in range(rng.choice([1, 1, 2])):
            ids.insert(rng.randint(0, len(ids)), rng.choice(ids))
    return ids


def broker_names(rng, strategy):
    """Broker names sharing stems; `room@broker` for MACHINE_ROOM, `room-broker`
    for MACHINE_ROOM_NEARBY."""
    common = stems(rng, ['broker-', 'broker-a', 'b', 'broker\U00020000', 'broker\uff01'])
    names = []
    for _ in range(rng.choice([1, 2, 2, 3, 4]) if rng.random() < 0.9 else rng.randint(5, 8)):
        name = rng.choice(common) + tricky(rng, rng.randint(1, 2))
        if strategy == 'MACHINE_ROOM':
            name = rng.choice(CLIENT_ROOMS) + '@' + name
        elif strategy == 'MACHINE_ROOM_NEARBY':
            name = rng.choice(CLIENT_ROOMS) + '-' + name
        names.append(name)
    return list(dict.fromkeys(names))


def client_queues(rng, strategy):
    """The topic's queue set, distinct queues in a random order (the client
    sorts a copy of a HashSet): a random subset of every broker's queues
    0..n-1. Most cases have one topic, as a rebalance of one topic has; some
    have several so that the topic comparison is exercised too."""
    topics = ['Topic' + tricky(rng, rng.randint(0, 2))]
    if rng.random() < 0.3:
        topics += ['Topic' + tricky(rng, rng.randint(1, 3)) for _ in range(rng.randint(1, 3))]
        topics = list(dict.fromkeys(topics))
    result = []
    for topic in topics:
        for broker in broker_names(rng, strategy):
            count = rng.randint(1, 8) if rng.random() < 0.9 else rng.randint(9, 16)
            result += [{'topic': topic, 'broker': broker, 'queue_id': q}
                       for q in range(count) if rng.random() >= 0.1]
    rng.shuffle(result)
    return result[:rng.randint(1, 24) if rng.random() < 0.85 else rng.randint(25, 48)]


def client_case(rng):
    strategy = rng.choice(STRATEGIES)
    c = {'strategy': strategy, 'sort': True}
    if strategy == 'CONSISTENT_HASH':
        c['virtual_nodes'] = rng.choice(VIRTUAL_NODES)
    if strategy == 'MACHINE_ROOM':
        c['consumer_idcs'] = sorted(rng.sample(CLIENT_ROOMS, rng.randint(1, len(CLIENT_ROOMS))))
    c['queues'] = [] if rng.random() < 0.02 else client_queues(rng, strategy)
    ids = [] if rng.random() < 0.02 else client_ids(rng, strategy)
    rng.shuffle(ids)
    c['consumers'] = ids
    callers = list(dict.fromkeys(ids))
    if ids and rng.random() < 0.15:
        # A client not (or no longer) in the list, looking like one that is.
        callers.append(rng.choice(ids) + rng.choice(ASTRAL + BMP_HIGH))
    if rng.random() < 0.02:
        callers.append('')
    c['results'] = [{'current': x} for x in callers]
    return c


def hexed(s):
    return s.encode('utf-8').hex() if s else '-'


def bytes_order(c):
    """The positions of the queues and of the client ids sorted by UTF-8
    bytes (queues by topic, broker name, then queue id)."""
    qs = c['queues']
    queues = sorted(range(len(qs)), key=lambda i: (qs[i]['topic'].encode('utf-8'),
                                                   qs[i]['broker'].encode('utf-8'), qs[i]['queue_id']))
    ids = sorted(range(len(c['consumers'])), key=lambda i: c['consumers'][i].encode('utf-8'))
    return queues, ids


def runner_line(c, order=None):
    """The case in Runner.java's input format; with `order` (from
    bytes_order), both lists so sorted and not sorted again."""
    if order is not None:
        c = dict(c, sort=False, queues=[c['queues'][i] for i in order[0]],
                 consumers=[c['consumers'][i] for i in order[1]])
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
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--edge', action='store_true', help='add corner cases beyond the sample')
    mode.add_argument('--client', action='store_true', help='client-level cases: sorted lists, UTF-16 order')
    mode.add_argument('--bytes', action='store_true',
                      help='client-level cases of a client that sorts by UTF-8 bytes (the Rust and Go clients)')
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument('--classes', default=os.path.join(here, '..', '..', 'target', 'java-harness'))
    args = parser.parse_args()
    # A class path: the harness's folder first (then, say, the client's jars).
    if not os.path.exists(os.path.join(args.classes.split(os.pathsep)[0], 'Runner.class')):
        sys.exit('no Runner.class in %s: run tests/java/build.sh ROCKETMQ_CHECKOUT first' % args.classes)

    rng = random.Random(args.seed)
    client = args.client or args.bytes
    cases = [client_case(rng) if client else case(rng, args.edge) for _ in range(args.count)]
    # A byte-sorting client sorts both lists by UTF-8 bytes and calls
    # Java's strategy on them: Runner gets them so sorted, unsorted again.
    orders = [bytes_order(c) if args.bytes else None for c in cases]
    java = subprocess.run(['java', '-cp', args.classes, 'Runner'],
                          input=''.join(runner_line(c, o) + '\n' for c, o in zip(cases, orders)),
                          capture_output=True, text=True, encoding='utf-8', check=True)
    answers = java.stdout.split('\n')[:len(cases)]
    if len(answers) != len(cases):
        sys.exit('Runner answered %d of %d cases' % (len(answers), len(cases)))
    for c, o, line in zip(cases, orders, answers):
        parts = line.split('\t') if c['results'] else []
        if len(parts) != len(c['results']):
            sys.exit('Runner answered %d of %d calls of a case' % (len(parts), len(c['results'])))
        c['results'] = [result(r['current'], a) for r, a in zip(c['results'], parts)]
        if o is not None:
            c['order'] = 'bytes'
            for r in c['results']:
                if 'queues' in r:
                    r['queues'] = [o[0][i] for i in r['queues']]
        sys.stdout.write(json.dumps(c, ensure_ascii=False, separators=(',', ':')) + '\n')


if __name__ == '__main__':
    main()
