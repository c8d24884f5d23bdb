package clusterdns

import (
	"context"
	"errors"

	"golang.org/x/net/dns/dnsmessage"
)

// Sizes of DNS messages: what a UDP answer may take without EDNS (RFC
// 1035), what the responder offers with it (the DNS flag day 2020 value,
// which avoids IP fragmentation), and the most a message may be over TCP.
const (
	maxUDPPlain = 512
	maxUDPEDNS  = 1232
	maxTCP      = 65535
)

// Forwarder answers names outside the cluster's zone (*Forward).
type Forwarder interface {
	// Forward asks the host's resolvers q; the answer is a whole message
	// whose ID and question are q's.
	Forward(ctx context.Context, q dnsmessage.Question, recursionDesired bool) (dnsmessage.Message, error)
}

// Responder decides the answer to a DNS query.
type Responder struct {
	cluster *cluster
	forward Forwarder
}

// NewResponder answers the names of the cluster domain from src and
// forwards the others to fwd (nil: they are refused).
func NewResponder(domain string, src Source, fwd Forwarder) *Responder {
	return &Responder{cluster: newCluster(domain, src, DefaultTTL), forward: fwd}
}

// Answer returns the response to the query packet q, or nil when q gets
// none (it is not a query, or too broken to carry an ID to answer to).
// udp says the answer goes back over UDP, where it is truncated to what
// the client can receive.
func (r *Responder) Answer(ctx context.Context, q []byte, udp bool) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil || h.Response {
		return nil
	}
	resp := dnsmessage.Message{Header: dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired}}
	if h.OpCode != 0 {
		resp.Header.RCode = dnsmessage.RCodeNotImplemented
		return pack(resp, udp, maxUDPPlain)
	}
	questions, err := p.AllQuestions()
	if err != nil || len(questions) != 1 {
		resp.Header.RCode = dnsmessage.RCodeFormatError
		return pack(resp, udp, maxUDPPlain)
	}
	question := questions[0]
	resp.Questions = questions
	// EDNS: the client's UDP size, and an OPT record in the answer when
	// the query had one.
	limit := maxUDPPlain
	edns := false
	if err := p.SkipAllAnswers(); err == nil {
		if err := p.SkipAllAuthorities(); err == nil {
			for {
				rh, err := p.AdditionalHeader()
				if err != nil {
					break
				}
				if rh.Type == dnsmessage.TypeOPT {
					edns = true
					if size := int(rh.Class); size > limit {
						limit = min(size, maxUDPEDNS)
					}
				}
				if err := p.SkipAdditional(); err != nil {
					break
				}
			}
		}
	}
	finish := func() []byte {
		if edns {
			var opt dnsmessage.ResourceHeader
			_ = opt.SetEDNS0(maxUDPEDNS, dnsmessage.RCodeSuccess, false)
			resp.Additionals = append(resp.Additionals, dnsmessage.Resource{Header: opt, Body: &dnsmessage.OPTResource{}})
		}
		return pack(resp, udp, limit)
	}
	if question.Class != dnsmessage.ClassINET && question.Class != dnsmessage.ClassANY {
		resp.Header.RCode = dnsmessage.RCodeNotImplemented
		return finish()
	}
	if labels, ok := r.cluster.inZone(question.Name.String()); ok {
		res := r.cluster.answer(question, labels)
		resp.Header.Authoritative = true
		resp.Header.RCode = res.rcode
		resp.Answers = res.answers
		resp.Additionals = res.additional
		if res.soa {
			resp.Authorities = []dnsmessage.Resource{r.cluster.soaRecord()}
		}
		return finish()
	}
	if r.forward == nil {
		resp.Header.RCode = dnsmessage.RCodeRefused
		return finish()
	}
	fwd, err := r.forward.Forward(ctx, question, h.RecursionDesired)
	if err != nil {
		resp.Header.RCode = dnsmessage.RCodeServerFailure
		if errors.Is(err, errRefused) {
			resp.Header.RCode = dnsmessage.RCodeRefused
		}
		return finish()
	}
	resp.Header.RCode = fwd.Header.RCode
	resp.Header.RecursionAvailable = fwd.Header.RecursionAvailable
	resp.Header.Authoritative = fwd.Header.Authoritative
	resp.Answers, resp.Authorities = fwd.Answers, fwd.Authorities
	for _, a := range fwd.Additionals {
		if a.Header.Type != dnsmessage.TypeOPT {
			resp.Additionals = append(resp.Additionals, a)
		}
	}
	return finish()
}

// pack packs m; over UDP an answer larger than limit is sent truncated
// (TC set, question only), and the client asks again over TCP.
func pack(m dnsmessage.Message, udp bool, limit int) []byte {
	b, err := m.Pack()
	if err == nil && (!udp || len(b) <= limit) && len(b) <= maxTCP {
		return b
	}
	t := dnsmessage.Message{Header: m.Header, Questions: m.Questions}
	t.Header.Truncated = true
	for _, a := range m.Additionals {
		if a.Header.Type == dnsmessage.TypeOPT {
			t.Additionals = append(t.Additionals, a)
		}
	}
	if err != nil {
		t.Header.Truncated = false
		t.Header.RCode = dnsmessage.RCodeServerFailure
	}
	b, err = t.Pack()
	if err != nil {
		return nil
	}
	return b
}
