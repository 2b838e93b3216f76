package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/connect-init/connect-init/kafka"
)

// DefaultQuorumWait bounds one DescribeQuorum: a broker forwards it to the
// active controller, which answers at once when it leads; no answer in
// this long, while the broker answers everything else, is a quorum
// without a leader.
const DefaultQuorumWait = 3 * time.Second

// quorumEvery is how often a gate that is waiting asks again.
const quorumEvery = 5 * time.Second

// QuorumReport is the KRaft controller quorum as the brokers gate saw it.
type QuorumReport struct {
	// Lost is true when the quorum has no leader: DescribeQuorum said so,
	// or got no answer within the wait while the broker answered Metadata.
	Lost bool `json:"lost"`
	// Error is why the quorum could not be read (also when Lost).
	Error string `json:"error,omitempty"`
	// LeaderID is the active controller, -1 when unknown.
	LeaderID    int32               `json:"leader_id"`
	LeaderEpoch int32               `json:"leader_epoch"`
	Voters      []kafka.QuorumVoter `json:"voters"`
}

// Summary is one line for wait lines and errors.
func (q *QuorumReport) Summary() string {
	switch {
	case q == nil:
		return ""
	case q.Lost:
		return "the KRaft controller quorum has no leader (" + q.Error + "): until a majority of controller.quorum.voters runs, no partition leader is elected and no broker is fenced or let back in"
	case q.Error != "":
		return "controller quorum not read: " + q.Error
	}
	var voters []string
	for _, v := range q.Voters {
		voters = append(voters, fmt.Sprintf("%d (lag %d)", v.ID, v.Lag))
	}
	return fmt.Sprintf("controller quorum: leader %d, epoch %d, voters %s", q.LeaderID, q.LeaderEpoch, strings.Join(voters, ", "))
}

// quorumFix is the fix of a lost quorum.
const quorumFix = "start the KRaft controllers (the nodes with process.roles=controller, or the combined nodes, listed in controller.quorum.voters / controller.quorum.bootstrap.servers): a majority of the voters must run for the quorum to elect a leader"

// askQuorum reads the quorum from the broker at addr, bounded by wait.
func askQuorum(ctx context.Context, g *BrokerGate, addr string) *QuorumReport {
	wait := g.QuorumWait
	if wait <= 0 {
		wait = DefaultQuorumWait
	}
	qctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	q, err := kafka.DescribeQuorum(qctx, g.Config, addr)
	rep := &QuorumReport{LeaderID: -1}
	switch {
	case errors.Is(err, kafka.ErrQuorumNotAsked):
		rep.Error = err.Error()
	case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		rep.Lost, rep.Error = true, fmt.Sprintf("the broker at %s forwarded DescribeQuorum to the active controller and got no answer within %s", addr, wait)
	case err != nil:
		rep.Error = kafka.ExplainWith(err, g.Config)
	case q.LeaderID < 0:
		rep.Lost, rep.Error = true, "DescribeQuorum names no leader"
	default:
		rep.LeaderID, rep.LeaderEpoch, rep.Voters = q.LeaderID, q.LeaderEpoch, q.Voters
	}
	return rep
}

// quorum is the quorum for this probe: asked when AskQuorum is set or the
// cluster is not ready, on KRaft only, at most every quorumEvery while
// waiting (the last answer is kept between).
func (g *BrokerGate) quorum(ctx context.Context, rep *BrokerReport, addr string, now time.Time) *QuorumReport {
	if rep.Mode != kafka.ModeKRaft || rep.Ready && !g.AskQuorum {
		return nil
	}
	if g.lastQuorum != nil && now.Sub(g.lastQuorumAt) < quorumEvery && !g.AskQuorum {
		return g.lastQuorum
	}
	q := askQuorum(ctx, g, addr)
	if ctx.Err() != nil && g.lastQuorum != nil {
		// The gate's own deadline cut the ask short: that is no evidence
		// about the quorum; the last answer stands.
		return g.lastQuorum
	}
	g.lastQuorum, g.lastQuorumAt = q, now
	return q
}
