package gate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
)

// EOSHangWindow is how long a transaction on the config topic must stay open
// to count as hanging: Connect's worker.sync.timeout.ms default (3 s), the
// time a worker reading the topic read_committed waits before it backs
// off.
const EOSHangWindow = 3 * time.Second

// EOSReader reads what the exactly-once readiness rules (connect/parity's
// EOSChecks) judge; AdminEOS asks the cluster. It lives with the gates so
// that the group step (startup) and doctor read and judge alike.
type EOSReader interface {
	// TxnState describes __transaction_state: whether it exists, its
	// partitions' in-sync replica counts and its min.insync.replicas.
	TxnState() (exists bool, isr map[int32]int, minISR int, err error)
	// Brokers are the live brokers and their
	// transaction.state.log.replication.factor.
	Brokers() (live, rf int, err error)
	// StableOffset is the config topic's last stable offset now.
	StableOffset(topic string) (int64, error)
	// TxnACLs are the ACLs on TransactionalId resources (DescribeAcls);
	// sarama.ErrSecurityDisabled when the brokers run no authorizer.
	TxnACLs() ([]parity.ACL, error)
	// DescribeTxn is the broker's answer when the worker's principal
	// describes the transactional id (DescribeTransactions: Describe only,
	// never InitProducerId, which would fence the live leader).
	DescribeTxn(id string) (parity.Probe, error)
	// APIVersions are each live broker's requests and their highest
	// versions (ApiVersions), by broker id.
	APIVersions() (map[int32]map[int16]int16, error)
	// Host is this worker's address as the brokers see it (best effort:
	// the source address toward the first broker).
	Host() string
}

// EOSWorker is what the exactly-once rules need of this worker: its
// group, its exactly.once.source.support, its principal (or why it cannot
// be told) and its bootstrap servers (for the kafka-acls line).
type EOSWorker struct {
	Group, Support         string
	Principal, NoPrincipal string
	Bootstrap              string
}

// EOSLook is exactly-once readiness for the worker of cfg, read through
// clients (the admin client for the ACLs and configs, the worker's
// top-level client for its principal and the broker's answer): the one
// look the group step and doctor share. Nothing is read when the
// worker's exactly.once.source.support is disabled. Doctor passes a nil
// rep: its own config-topic-open-transaction finding judges the config
// topic's open transaction.
func EOSLook(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, rep *GroupReport, clk clock.Clock) ([]checks.Result, error) {
	if clients == nil || clients.Admin == nil {
		return nil, nil
	}
	row, _ := parity.RowOf(parity.KeyExactlyOnce)
	w := EOSWorker{Group: cfg.GroupID, Support: parity.Normal(row, cfg.Worker.Get(parity.KeyExactlyOnce, row.Default)),
		Bootstrap: strings.Join(cfg.BootstrapServers, ",")}
	if clients.Member != nil {
		w.Principal, w.NoPrincipal = ACLPrincipal(clients.Member.Config())
	}
	return EOSResults(ctx, w, rep, AdminEOS{Admin: clients.Admin, Client: clients.Member}, clk)
}

// EOSResults judges exactly-once readiness for a worker whose
// exactly.once.source.support is w.Support ("" or disabled: nothing);
// rep (the group gate's report, may be nil) gives the config topic's
// offsets, from which a transaction that stays open over EOSHangWindow is
// judged hanging.
func EOSResults(ctx context.Context, w EOSWorker, rep *GroupReport, r EOSReader, clk clock.Clock) ([]checks.Result, error) {
	if w.Support != "preparing" && w.Support != "enabled" {
		return nil, nil
	}
	e := parity.EOS{GroupID: w.Group, Support: w.Support, MinISR: 2, ReplicationFactor: 3, Window: EOSHangWindow.String(),
		TxnID: parity.TransactionalID(w.Group), Principal: w.Principal, Bootstrap: w.Bootstrap}
	exists, isr, minISR, err := r.TxnState()
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", parity.TxnStateTopic, err)
	}
	e.Exists = exists
	if minISR > 0 {
		e.MinISR = minISR
	}
	for p, n := range isr {
		if n < e.MinISR {
			e.BelowMinISR = append(e.BelowMinISR, p)
		}
	}
	if !exists {
		if e.Brokers, e.ReplicationFactor, err = r.Brokers(); err != nil {
			return nil, fmt.Errorf("the brokers' transaction.state.log.replication.factor: %w", err)
		}
	}
	if rep != nil && rep.ConfigStableOffset >= 0 && rep.ConfigStableOffset < rep.ConfigEndOffset {
		e.ConfigTopic = rep.ConfigTopic
		if clock.Sleep(clock.Or(clk), ctx.Done(), EOSHangWindow) {
			lso, err := r.StableOffset(rep.ConfigTopic)
			if err != nil {
				return nil, fmt.Errorf("last stable offset of config topic %q: %w", rep.ConfigTopic, err)
			}
			e.Hanging, e.HangingAt = lso == rep.ConfigStableOffset, lso
		}
	}
	vs, err := r.APIVersions()
	if err != nil {
		return nil, fmt.Errorf("the brokers' ApiVersions: %w", err)
	}
	for id, keys := range vs {
		if missing := parity.MissingEOSAPIs(keys); len(missing) > 0 {
			if e.OldBrokers == nil {
				e.OldBrokers = map[string][]string{}
			}
			e.OldBrokers[strconv.Itoa(int(id))] = missing
		}
	}
	judgeTxnACLs(&e, w, r)
	return checks.Run(parity.EOSChecks(), e), nil
}

// judgeTxnACLs judges the worker's principal's access to the leader's
// transactional id (e.TxnID) from the ACLs and the broker's answer to a
// Describe; a cluster without an authorizer has nothing to judge. What
// cannot be read is e.Unchecked (a warning), never a refusal.
func judgeTxnACLs(e *parity.EOS, w EOSWorker, r EOSReader) {
	acls, err := r.TxnACLs()
	switch {
	case errors.Is(err, sarama.ErrSecurityDisabled):
		return // no authorizer: no ACL to check
	case err != nil:
		e.Unchecked = "the ACLs cannot be read (DescribeAcls needs Describe on the cluster): " + err.Error()
		return
	case w.Principal == "":
		e.Unchecked = "cannot tell the principal: " + w.NoPrincipal
		return
	}
	probe := parity.ProbeNotAsked
	if e.Exists { // finding a transaction coordinator would create __transaction_state
		if probe, err = r.DescribeTxn(e.TxnID); err != nil {
			e.Unchecked = "the broker's answer to DescribeTransactions: " + err.Error()
			return
		}
	}
	a := parity.JudgeTxnAccess(acls, e.TxnID, w.Principal, r.Host(), probe)
	e.Access = &a
}

// ACLPrincipal is the principal the brokers see for a client with cfg, or
// why it cannot be told: the user name of PLAIN and SCRAM (Kafka's
// default principal builder), ANONYMOUS without SASL and without a client
// certificate. A GSSAPI or OAUTHBEARER principal depends on the brokers'
// mapping rules and a certificate's on ssl.principal.mapping.rules: not
// guessed.
func ACLPrincipal(cfg *sarama.Config) (string, string) {
	switch {
	case cfg == nil:
		return "", "no client settings"
	case cfg.Net.SASL.Enable:
		switch cfg.Net.SASL.Mechanism {
		case sarama.SASLTypePlaintext, sarama.SASLTypeSCRAMSHA256, sarama.SASLTypeSCRAMSHA512:
			return "User:" + cfg.Net.SASL.User, ""
		}
		return "", "sasl.mechanism=" + string(cfg.Net.SASL.Mechanism) + " maps to a principal by the brokers' rules (sasl.kerberos.principal.to.local.rules, the token's sub claim)"
	case cfg.Net.TLS.Enable && cfg.Net.TLS.Config != nil && (len(cfg.Net.TLS.Config.Certificates) > 0 || cfg.Net.TLS.Config.GetClientCertificate != nil):
		return "", "a TLS client certificate maps to a principal by the brokers' ssl.principal.mapping.rules"
	}
	return "User:ANONYMOUS", ""
}

// AdminEOS is the EOSReader of a real cluster: admin with the admin
// client's settings, client with the worker's top-level ones (those of
// the leader's config-topic producer).
type AdminEOS struct {
	Admin  sarama.ClusterAdmin
	Client sarama.Client
}

func (a AdminEOS) TxnACLs() ([]parity.ACL, error) {
	res, err := a.Admin.ListAcls(sarama.AclFilter{ResourceType: sarama.AclResourceTransactionalID,
		ResourcePatternTypeFilter: sarama.AclPatternAny, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny})
	if err != nil {
		return nil, err
	}
	var out []parity.ACL
	for _, ra := range res {
		for _, acl := range ra.Acls {
			op, perm := acl.Operation, acl.PermissionType
			out = append(out, parity.ACL{Resource: ra.ResourceName, Prefixed: ra.ResourcePatternType == sarama.AclPatternPrefixed,
				Principal: acl.Principal, Host: acl.Host, Operation: op.String(), Allow: perm == sarama.AclPermissionAllow})
		}
	}
	return out, nil
}

// errTransactionalIDNotFound is Kafka's TRANSACTIONAL_ID_NOT_FOUND (105),
// which sarama does not name: the id has no transaction yet (a group that
// never ran preparing or enabled); the Describe was allowed.
const errTransactionalIDNotFound = sarama.KError(105)

func (a AdminEOS) DescribeTxn(id string) (parity.Probe, error) {
	b, err := a.Client.TransactionCoordinator(id)
	if err == nil {
		var resp *sarama.DescribeTransactionsResponse
		if resp, err = b.DescribeTransactions(&sarama.DescribeTransactionsRequest{TransactionalIDs: []string{id}}); err == nil {
			for _, st := range resp.TransactionStates {
				if st.ErrorCode != sarama.ErrNoError && st.ErrorCode != errTransactionalIDNotFound {
					err = st.ErrorCode
				}
			}
		}
	}
	switch {
	case errors.Is(err, sarama.ErrTransactionalIDAuthorizationFailed):
		return parity.ProbeDenied, nil
	case err != nil:
		return parity.ProbeNotAsked, err
	}
	return parity.ProbeAllowed, nil
}

func (a AdminEOS) APIVersions() (map[int32]map[int16]int16, error) {
	out := map[int32]map[int16]int16{}
	for _, b := range a.Client.Brokers() {
		if err := b.Open(a.Client.Config()); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
			return nil, fmt.Errorf("broker %d: %w", b.ID(), err)
		}
		resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{})
		if err != nil {
			return nil, fmt.Errorf("broker %d (%s): %w", b.ID(), b.Addr(), err)
		}
		if resp.ErrorCode != int16(sarama.ErrNoError) {
			return nil, fmt.Errorf("broker %d (%s): %w", b.ID(), b.Addr(), sarama.KError(resp.ErrorCode))
		}
		keys := map[int16]int16{}
		for _, k := range resp.ApiKeys {
			keys[k.ApiKey] = k.MaxVersion
		}
		out[b.ID()] = keys
	}
	return out, nil
}

func (a AdminEOS) Host() string {
	bs := a.Client.Brokers()
	if len(bs) == 0 {
		return ""
	}
	c, err := net.Dial("udp", bs[0].Addr()) // no packet is sent: the route's source address
	if err != nil {
		return ""
	}
	defer c.Close()
	if ua, ok := c.LocalAddr().(*net.UDPAddr); ok {
		return ua.IP.String()
	}
	return ""
}

func (a AdminEOS) TxnState() (bool, map[int32]int, int, error) {
	md, err := a.Admin.DescribeTopics([]string{parity.TxnStateTopic})
	if err != nil {
		return false, nil, 0, err
	}
	if len(md) != 1 || errors.Is(md[0].Err, sarama.ErrUnknownTopicOrPartition) {
		return false, nil, 0, nil
	}
	if md[0].Err != sarama.ErrNoError {
		return false, nil, 0, md[0].Err
	}
	isr := map[int32]int{}
	for _, p := range md[0].Partitions {
		isr[p.ID] = len(p.Isr)
	}
	n, err := a.configInt(sarama.TopicResource, parity.TxnStateTopic, "min.insync.replicas")
	return true, isr, n, err
}

func (a AdminEOS) Brokers() (int, int, error) {
	bs, _, err := a.Admin.DescribeCluster()
	if err != nil {
		return 0, 0, err
	}
	if len(bs) == 0 {
		return 0, 0, errors.New("no broker described")
	}
	const key = "transaction.state.log.replication.factor"
	rf, err := a.configInt(sarama.BrokerResource, strconv.Itoa(int(bs[0].ID())), key)
	if err != nil {
		return len(bs), 0, err
	}
	if rf <= 0 {
		rf = 3 // Kafka's default
	}
	return len(bs), rf, nil
}

func (a AdminEOS) StableOffset(topic string) (int64, error) {
	leader, err := a.Client.Leader(topic, 0)
	if err != nil {
		return -1, err
	}
	req := sarama.NewOffsetRequest(sarama.MaxVersion)
	req.IsolationLevel = sarama.ReadCommitted
	req.AddBlock(topic, 0, sarama.OffsetNewest, 1)
	resp, err := leader.GetAvailableOffsets(req)
	if err != nil {
		return -1, err
	}
	b := resp.GetBlock(topic, 0)
	if b == nil {
		return -1, errors.New("no answer for partition 0")
	}
	if b.Err != sarama.ErrNoError {
		return -1, b.Err
	}
	return b.Offset, nil
}

// configInt is the integer config name of one resource (0 when absent).
func (a AdminEOS) configInt(t sarama.ConfigResourceType, resource, name string) (int, error) {
	res, err := a.Admin.DescribeConfigs([]*sarama.ConfigResource{{Type: t, Name: resource, ConfigNames: []string{name}}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		return 0, err
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("describe configs of %s: %d answers", resource, len(res))
	}
	if res[0].ErrorCode != sarama.ErrNoError {
		return 0, fmt.Errorf("describe configs of %s: %w", resource, res[0].ErrorCode)
	}
	for _, e := range res[0].Configs {
		if e.Name == name {
			n, _ := strconv.Atoi(e.Value)
			return n, nil
		}
	}
	return 0, nil
}
