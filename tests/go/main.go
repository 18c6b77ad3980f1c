// Command gocases writes allocation cases answered by the Go client's own
// consistent hash: AllocateByConsistentHash of rocketmq-client-go v2
// (consumer/strategy.go), which builds a stathat.com/c/consistent ring.
//
// Every expected result is what that function returns (or the panic it
// raises); this program only chooses the inputs. Some inputs are searched
// for with CRC-32, the ring's hash, so that the ring's quirks show: two
// client ids whose points collide, and a queue that hashes exactly onto a
// point. Each such input is kept only when Go's own answer shows the quirk.
//
// The cases use the conformance format of tests/data/README.md:
// strategy CONSISTENT_HASH, virtual_nodes, sort (true: both lists sorted
// first as the Go consumer's doBalance sorts them, by bytes), the queues
// and client ids in the order given, and one result per calling id.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

type queueJSON struct {
	Topic   string `json:"topic"`
	Broker  string `json:"broker"`
	QueueID int    `json:"queue_id"`
}

type callJSON struct {
	Current string `json:"current"`
	Queues  *[]int `json:"queues,omitempty"`
	Error   string `json:"error,omitempty"`
}

type caseJSON struct {
	Strategy     string      `json:"strategy"`
	Sort         bool        `json:"sort"`
	Order        string      `json:"order,omitempty"`
	VirtualNodes int         `json:"virtual_nodes"`
	Queues       []queueJSON `json:"queues"`
	Consumers    []string    `json:"consumers"`
	Results      []callJSON  `json:"results"`
}

// group is one case's input.
type group struct {
	virtualNodes int
	sorted       bool
	queues       []*primitive.MessageQueue
	consumers    []string
	callers      []string
}

// sortedAsDoBalance sorts copies of both lists as the Go consumer's
// doBalance (consumer/consumer.go) does before it allocates: client ids
// with sort.Strings, queues stably by topic, broker name and queue id,
// strings compared by bytes.
func sortedAsDoBalance(queues []*primitive.MessageQueue, ids []string) ([]*primitive.MessageQueue, []string) {
	mqs := append([]*primitive.MessageQueue(nil), queues...)
	cids := append([]string(nil), ids...)
	sort.Strings(cids)
	sort.SliceStable(mqs, func(i, j int) bool {
		if c := strings.Compare(mqs[i].Topic, mqs[j].Topic); c != 0 {
			return c < 0
		}
		if c := strings.Compare(mqs[i].BrokerName, mqs[j].BrokerName); c != 0 {
			return c < 0
		}
		return mqs[i].QueueId < mqs[j].QueueId
	})
	return mqs, cids
}

// call runs Go's strategy for one caller and reports the queues it returns
// as indices into g.queues (the unsorted list), or the panic it raises.
func (g group) call(current string) (result callJSON) {
	result.Current = current
	mqs, cids := g.queues, g.consumers
	if g.sorted {
		mqs, cids = sortedAsDoBalance(mqs, cids)
	}
	defer func() {
		if r := recover(); r != nil {
			result.Queues = nil
			result.Error = fmt.Sprint(r)
		}
	}()
	got := consumer.AllocateByConsistentHash(g.virtualNodes)("GID_cases", current, mqs, cids)
	indices := make([]int, 0, len(got))
	for _, q := range got {
		for i, p := range g.queues {
			if p == q {
				indices = append(indices, i)
				break
			}
		}
	}
	result.Queues = &indices
	return result
}

// owners is every caller's answer, for comparing two inputs.
func (g group) owners() string {
	var b strings.Builder
	for _, c := range g.callers {
		r := g.call(c)
		if r.Queues != nil {
			fmt.Fprint(&b, c, *r.Queues, ";")
		} else {
			fmt.Fprint(&b, c, "!", r.Error, ";")
		}
	}
	return b.String()
}

func (g group) json() caseJSON {
	c := caseJSON{
		Strategy:     "CONSISTENT_HASH",
		Sort:         g.sorted,
		VirtualNodes: g.virtualNodes,
		Consumers:    g.consumers,
	}
	if g.sorted {
		c.Order = "bytes"
	}
	for _, q := range g.queues {
		c.Queues = append(c.Queues, queueJSON{q.Topic, q.BrokerName, q.QueueId})
	}
	for _, id := range g.callers {
		c.Results = append(c.Results, g.call(id))
	}
	return c
}

// distinctCallers is every id of the list once, in list order, and then
// the extra callers (ids not in the list).
func distinctCallers(ids []string, extra ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range append(append([]string(nil), ids...), extra...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func queuesOf(topic string, brokers []string, perBroker int) []*primitive.MessageQueue {
	var qs []*primitive.MessageQueue
	for _, b := range brokers {
		for i := 0; i < perBroker; i++ {
			qs = append(qs, &primitive.MessageQueue{Topic: topic, BrokerName: b, QueueId: i})
		}
	}
	return qs
}

// ringHash is the ring's position of a key: CRC-32 (IEEE) of its bytes,
// as stathat.com/c/consistent v1.0.0 hashes; a point's key is the replica
// number in decimal followed by the client id. Used only to search for
// inputs; the answers are Go's.
func ringHash(key string) uint32 { return crc32.ChecksumIEEE([]byte(key)) }

func pointKey(id string, replica int) string { return strconv.Itoa(replica) + id }

const absent = "10.255.255.255@65535"

var (
	topics  = []string{"TopicTest", "%RETRY%GID_orders", "orders.v2", "Topic中文", "T\uE000", "T\U00010000", "rmq_sys_TRACE_DATA"}
	brokers = []string{"broker-a", "broker-b", "broker-c", "broker-d", "rmq-broker-0", "rmq-broker-1", "broker-\uFF01", "broker-\U0001F600", "192.168.24.1@defaultName"}
	nodes   = []int{10, 10, 10, 10, 10, 1, 2, 3, 5, 16, 20, 32, 50, 100}
)

// clientID draws a client id of one of the shapes clients produce:
// IP@pid (the default), IP@instanceName, IP@pid#unitName, many processes
// on one host, IPv6, user-chosen names on both sides of U+E000..U+FFFF.
func clientID(r *rand.Rand, shape int) string {
	switch shape {
	case 0:
		return fmt.Sprintf("10.%d.%d.%d@%d", r.Intn(256), r.Intn(256), r.Intn(256), 1+r.Intn(99999))
	case 1:
		return fmt.Sprintf("192.168.0.%d@DEFAULT", r.Intn(256))
	case 2:
		return fmt.Sprintf("172.17.0.2@%d", 1+r.Intn(65535))
	case 3:
		return fmt.Sprintf("10.0.0.%d@%d#unit-%d", r.Intn(256), 1+r.Intn(9999), r.Intn(4))
	case 4:
		// First octets that are decimal prefixes of one another: with
		// enough virtual nodes (12 for 1.0.0.1@1 and 11.0.0.1@1) their
		// point keys can be the same text.
		return fmt.Sprintf("%d.0.0.%d@1", []int{1, 11, 21, 111, 2, 12}[r.Intn(6)], r.Intn(3))
	case 5:
		return fmt.Sprintf("fe80::%x@%d", r.Intn(65536), 1+r.Intn(9999))
	default:
		return []string{"消费者", "\uE000", "\uFF01x", "\U00010000", "\U0001F600", "c"}[r.Intn(6)] + "@" + strconv.Itoa(r.Intn(50))
	}
}

func randomGroup(r *rand.Rand) group {
	g := group{virtualNodes: nodes[r.Intn(len(nodes))], sorted: r.Intn(100) < 85}
	topic := topics[r.Intn(len(topics))]
	perm := r.Perm(len(brokers))
	for _, bi := range perm[:1+r.Intn(4)] {
		n := 1 + r.Intn(16)
		if r.Intn(10) == 0 {
			n = 1 + r.Intn(48)
		}
		ids := r.Perm(64)[:n]
		if r.Intn(10) != 0 {
			for i := range ids {
				ids[i] = i
			}
		}
		for _, id := range ids {
			g.queues = append(g.queues, &primitive.MessageQueue{Topic: topic, BrokerName: brokers[bi], QueueId: id})
		}
	}
	if r.Intn(20) == 0 {
		// A second topic's queues in the same list.
		other := topics[r.Intn(len(topics))]
		for i := 0; i < 1+r.Intn(4); i++ {
			g.queues = append(g.queues, &primitive.MessageQueue{Topic: other + "-2", BrokerName: "broker-a", QueueId: i})
		}
	}
	n := 1 + r.Intn(12)
	if r.Intn(5) == 0 {
		n = 1 + r.Intn(48)
	}
	shape := r.Intn(7)
	seen := map[string]bool{}
	for len(g.consumers) < n {
		s := shape
		if r.Intn(8) == 0 {
			s = r.Intn(7)
		}
		id := clientID(r, s)
		if !seen[id] {
			seen[id] = true
			g.consumers = append(g.consumers, id)
		} else if s == 4 || s == 6 {
			// Few ids of these shapes: stop rather than draw for ever.
			break
		}
	}
	if r.Intn(15) == 0 {
		// A client id listed twice, as two processes with one IP and pid.
		g.consumers = append(g.consumers, g.consumers[r.Intn(len(g.consumers))])
	}
	r.Shuffle(len(g.queues), func(i, j int) { g.queues[i], g.queues[j] = g.queues[j], g.queues[i] })
	r.Shuffle(len(g.consumers), func(i, j int) { g.consumers[i], g.consumers[j] = g.consumers[j], g.consumers[i] })
	g.callers = distinctCallers(g.consumers)
	if r.Intn(2) == 0 {
		g.callers = append(g.callers, absent)
	}
	return g
}

// collidingPairs finds pairs of distinct IP@pid ids with a point of one on
// the same position as a point of the other (a CRC-32 collision), for
// virtualNodes points each.
func collidingPairs(virtualNodes, want int) [][2]string {
	at := map[uint32]string{}
	var pairs [][2]string
	for n := 0; len(pairs) < want; n++ {
		id := fmt.Sprintf("10.%d.%d.%d@4312", n>>16&255, n>>8&255, n&255)
		for i := 0; i < virtualNodes; i++ {
			h := ringHash(pointKey(id, i))
			if other, ok := at[h]; ok && other != id {
				pairs = append(pairs, [2]string{other, id})
				break
			}
			at[h] = id
		}
	}
	return pairs
}

// collisionGroups: each colliding pair, inserted in both orders, listed
// twice, and among other consumers. The later insertion takes the point,
// so the answers depend on the order of the (unsorted) list; a pair is
// kept only if Go's answers show it on the queues chosen.
func collisionGroups(r *rand.Rand) []group {
	var out []group
	queues := queuesOf("TopicTest", []string{"broker-a", "broker-b", "broker-c", "broker-d"}, 16)
	for _, pair := range collidingPairs(10, 12) {
		x, y := pair[0], pair[1]
		xy := group{virtualNodes: 10, queues: queues, consumers: []string{x, y}, callers: []string{x, y}}
		yx := xy
		yx.consumers = []string{y, x}
		if xy.owners() == yx.owners() {
			continue
		}
		others := []string{clientID(r, 0), clientID(r, 0), clientID(r, 0)}
		for _, ids := range [][]string{{x, y}, {y, x}, {x, y, x}, {y, x, y}, {x, x, y}, append([]string{y}, append(others, x)...)} {
			g := group{virtualNodes: 10, queues: queues, consumers: ids, callers: distinctCallers(ids, absent)}
			out = append(out, g)
			sorted := g
			sorted.sorted = true
			out = append(out, sorted)
		}
		if len(out) >= 36 {
			break
		}
	}
	return out
}

// prefixGroups: ids whose first octets are decimal prefixes of one another
// ("1.0.0.1@1" and "11.0.0.1@1"), so that with 12 virtual nodes or more
// the point keys "11" + "1.0.0.1@1" and "1" + "11.0.0.1@1" are one text.
func prefixGroups() []group {
	ids := []string{"1.0.0.1@1", "11.0.0.1@1", "111.0.0.1@1", "21.0.0.1@1", "2.0.0.1@1"}
	queues := queuesOf("TopicTest", []string{"broker-a", "broker-b"}, 8)
	var out []group
	for _, vn := range []int{10, 12, 20, 100} {
		for _, sorted := range []bool{true, false} {
			forward := append([]string(nil), ids...)
			backward := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
			for _, list := range [][]string{forward, backward} {
				out = append(out, group{virtualNodes: vn, sorted: sorted, queues: queues, consumers: list, callers: distinctCallers(list)})
				if sorted {
					break
				}
			}
		}
	}
	return out
}

// onAPointGroups: a queue whose hash is exactly the position of a point.
// Go's ring sends a queue to the first point strictly after its hash, so
// such a queue skips the point it lies on; kept when that point's owner
// is not the one Go answers.
func onAPointGroups(r *rand.Rand) []group {
	var ids []string
	for len(ids) < 40 {
		ids = append(ids, clientID(r, 0))
	}
	const vn = 10
	owner := map[uint32]string{}
	for _, id := range ids {
		for i := 0; i < vn; i++ {
			owner[ringHash(pointKey(id, i))] = id
		}
	}
	var out []group
	for n := 0; len(out) < 6; n++ {
		broker := fmt.Sprintf("broker-%d", n>>4)
		q := &primitive.MessageQueue{Topic: "TopicTest", BrokerName: broker, QueueId: n & 15}
		on, ok := owner[ringHash(q.String())]
		if !ok {
			continue
		}
		queues := queuesOf("TopicTest", []string{broker}, 16)
		g := group{virtualNodes: vn, sorted: true, queues: queues, consumers: ids, callers: []string{on}}
		mine := g.call(on)
		if mine.Queues == nil || contains(*mine.Queues, n&15) {
			continue
		}
		g.callers = distinctCallers(ids)
		out = append(out, g)
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// fixedGroups: the group of the Go client's own unit test
// (consumer/strategy_test.go: empty topic, brokers named like hosts), the
// worked example of docs/strategies.md, and zero virtual nodes, where the
// ring divides by zero and Go panics for every member (not for an id that
// is not one: the membership check comes first).
func fixedGroups() []group {
	var unitQueues []*primitive.MessageQueue
	for i, b := range []string{"192.168.24.1", "192.168.24.1", "192.168.24.1", "192.168.24.2", "192.168.24.2", "192.168.24.3"} {
		unitQueues = append(unitQueues, &primitive.MessageQueue{BrokerName: b + "@defaultName", QueueId: i})
	}
	unitIDs := []string{"192.168.24.1@default", "192.168.24.2@default", "192.168.24.3@default"}
	worked := queuesOf("T", []string{"broker-a", "broker-b"}, 4)
	workedIDs := []string{"10.0.0.1@1", "10.0.0.2@1", "10.0.0.3@1"}
	return []group{
		{virtualNodes: 10, queues: unitQueues, consumers: unitIDs, callers: unitIDs},
		{virtualNodes: 10, queues: unitQueues, consumers: unitIDs[:2], callers: distinctCallers(unitIDs[:2], unitIDs[2])},
		{virtualNodes: 10, sorted: true, queues: worked, consumers: workedIDs, callers: workedIDs},
		{virtualNodes: 0, sorted: true, queues: worked, consumers: workedIDs, callers: distinctCallers(workedIDs, absent)},
		{virtualNodes: 0, queues: worked[:1], consumers: workedIDs[:1], callers: distinctCallers(workedIDs, absent)},
	}
}

func main() {
	out := flag.String("out", "", "file to write the cases to (default: standard output)")
	seed := flag.Int64("seed", 2026, "seed of the random groups")
	random := flag.Int("random", 360, "number of random groups")
	flag.Parse()
	rlog.SetLogLevel("fatal")

	r := rand.New(rand.NewSource(*seed))
	groups := fixedGroups()
	groups = append(groups, prefixGroups()...)
	groups = append(groups, collisionGroups(r)...)
	groups = append(groups, onAPointGroups(r)...)
	for i := 0; i < *random; i++ {
		groups = append(groups, randomGroup(r))
	}

	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	buf := bufio.NewWriter(w)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	calls, failures := 0, 0
	for _, g := range groups {
		c := g.json()
		for _, res := range c.Results {
			calls++
			if res.Error != "" {
				failures++
			}
		}
		if err := enc.Encode(c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := buf.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "%d cases, %d calls (%d panics)\n", len(groups), calls, failures)
}
