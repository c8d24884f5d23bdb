// Package clusterdns answers the cluster's DNS names at the node, as the
// Kubernetes DNS specification names them: Services (A, AAAA, SRV; the
// endpoints of headless Services; ExternalName as a CNAME), endpoints of
// headless Services by host name, and pods by their dashed address. It
// answers from the node's own store of Services and EndpointSlices (package
// servicestore), so names keep resolving while the cloud is away, and
// forwards every other name to the host's resolvers through a bounded
// cache. Deciding an answer (this file) is pure logic over a Source; the
// listener (server.go) is a thin layer that never listens on more than the
// one address it is given.
package clusterdns

import (
	"net/netip"
	"sort"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Source is what cluster names are answered from (*servicestore.Store).
type Source interface {
	Service(namespace, name string) (*v1.Service, bool)
	EndpointSlices(namespace, service string) []*discoveryv1.EndpointSlice
}

// DefaultTTL is the TTL of cluster answers, CoreDNS's kubernetes plugin's:
// short, because Services and endpoints change.
const DefaultTTL = 5

// cluster answers the names of one cluster domain.
type cluster struct {
	zone   string // lower case, with the trailing dot: "cluster.local."
	labels []string
	src    Source
	ttl    uint32
}

func newCluster(domain string, src Source, ttl uint32) *cluster {
	z := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(domain), ".")) + "."
	return &cluster{zone: z, labels: strings.Split(strings.TrimSuffix(z, "."), "."), src: src, ttl: ttl}
}

// inZone returns the labels of name before the zone, lower case, and
// whether name is the zone or below it.
func (c *cluster) inZone(name string) ([]string, bool) {
	n := strings.ToLower(name)
	if n == c.zone {
		return nil, true
	}
	if !strings.HasSuffix(n, "."+c.zone) {
		return nil, false
	}
	return strings.Split(strings.TrimSuffix(n, "."+c.zone), "."), true
}

// result is a decided answer: the records, or an rcode with none.
type result struct {
	rcode      dnsmessage.RCode
	answers    []dnsmessage.Resource
	additional []dnsmessage.Resource
	// soa is set on a negative answer (NXDOMAIN, or a name without
	// records of the type asked: NODATA), for the authority section.
	soa bool
}

func nxdomain() result { return result{rcode: dnsmessage.RCodeNameError, soa: true} }
func nodata() result   { return result{rcode: dnsmessage.RCodeSuccess, soa: true} }

// answer decides the answer to q, a name in the zone (labels as inZone
// returns them).
func (c *cluster) answer(q dnsmessage.Question, labels []string) result {
	n := len(labels)
	switch {
	case n == 0:
		if q.Type == dnsmessage.TypeSOA {
			return result{answers: []dnsmessage.Resource{c.soaRecord()}}
		}
		return nodata()
	case labels[n-1] == "svc":
		return c.answerSvc(q, labels[:n-1])
	case labels[n-1] == "pod":
		return c.answerPod(q, labels[:n-1])
	}
	return nxdomain()
}

// answerSvc answers <...>.svc.<zone>; l is what comes before "svc".
func (c *cluster) answerSvc(q dnsmessage.Question, l []string) result {
	switch len(l) {
	case 0, 1:
		// svc.<zone> and <ns>.svc.<zone> have names below them: empty
		// non-terminals, not names that do not exist (RFC 8020).
		return nodata()
	case 2:
		return c.serviceRecords(q, l[1], l[0])
	case 3:
		if strings.HasPrefix(l[0], "_") {
			// _<proto>.<svc>.<ns>.svc: a non-terminal when the
			// Service has a port of that protocol.
			if svc, ok := c.src.Service(l[2], l[1]); ok && hasProtocol(svc, strings.TrimPrefix(l[0], "_")) {
				return nodata()
			}
			return nxdomain()
		}
		return c.endpointByHostname(q, l[2], l[1], l[0])
	case 4:
		if strings.HasPrefix(l[0], "_") && strings.HasPrefix(l[1], "_") {
			return c.srvRecords(q, l[3], l[2], strings.TrimPrefix(l[0], "_"), strings.TrimPrefix(l[1], "_"))
		}
	}
	return nxdomain()
}

func hasProtocol(svc *v1.Service, proto string) bool {
	for _, p := range svc.Spec.Ports {
		if strings.EqualFold(string(protocolOf(p.Protocol)), proto) {
			return true
		}
	}
	return false
}

func protocolOf(p v1.Protocol) v1.Protocol {
	if p == "" {
		return v1.ProtocolTCP
	}
	return p
}

func (c *cluster) serviceName(ns, name string) string { return name + "." + ns + ".svc." + c.zone }

// serviceRecords answers <svc>.<ns>.svc.<zone>.
func (c *cluster) serviceRecords(q dnsmessage.Question, ns, name string) result {
	svc, ok := c.src.Service(ns, name)
	if !ok {
		return nxdomain()
	}
	if svc.Spec.Type == v1.ServiceTypeExternalName {
		target, ok := fqdn(svc.Spec.ExternalName)
		if !ok {
			return nodata()
		}
		return result{answers: []dnsmessage.Resource{{
			Header: c.header(q.Name, dnsmessage.TypeCNAME),
			Body:   &dnsmessage.CNAMEResource{CNAME: target},
		}}}
	}
	if q.Type == dnsmessage.TypeSRV {
		return c.srvRecords(q, ns, name, "", "")
	}
	var addrs []netip.Addr
	if isHeadless(svc) {
		for _, ep := range c.endpoints(svc, "", "") {
			addrs = append(addrs, ep.addr)
		}
	} else {
		for _, ip := range clusterIPs(svc) {
			if a, err := netip.ParseAddr(ip); err == nil {
				addrs = append(addrs, a)
			}
		}
	}
	return c.addressResult(q, addrs)
}

func isHeadless(svc *v1.Service) bool { return svc.Spec.ClusterIP == v1.ClusterIPNone }

func clusterIPs(svc *v1.Service) []string {
	if len(svc.Spec.ClusterIPs) > 0 {
		return svc.Spec.ClusterIPs
	}
	if svc.Spec.ClusterIP != "" {
		return []string{svc.Spec.ClusterIP}
	}
	return nil
}

// addressResult answers an A, AAAA (or ANY) question with the addresses
// of its family; NODATA when there are none of it.
func (c *cluster) addressResult(q dnsmessage.Question, addrs []netip.Addr) result {
	var r result
	for _, a := range uniqueAddrs(addrs) {
		if rr, ok := c.addressRecord(q.Name, q.Type, a); ok {
			r.answers = append(r.answers, rr)
		}
	}
	if len(r.answers) == 0 {
		return nodata()
	}
	return r
}

func (c *cluster) addressRecord(name dnsmessage.Name, t dnsmessage.Type, a netip.Addr) (dnsmessage.Resource, bool) {
	a = a.Unmap()
	switch {
	case a.Is4() && (t == dnsmessage.TypeA || t == dnsmessage.TypeALL):
		return dnsmessage.Resource{Header: c.header(name, dnsmessage.TypeA), Body: &dnsmessage.AResource{A: a.As4()}}, true
	case a.Is6() && (t == dnsmessage.TypeAAAA || t == dnsmessage.TypeALL):
		return dnsmessage.Resource{Header: c.header(name, dnsmessage.TypeAAAA), Body: &dnsmessage.AAAAResource{AAAA: a.As16()}}, true
	}
	return dnsmessage.Resource{}, false
}

func uniqueAddrs(in []netip.Addr) []netip.Addr {
	seen := map[netip.Addr]bool{}
	var out []netip.Addr
	for _, a := range in {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// endpoint is one address of a Service's EndpointSlices.
type endpoint struct {
	addr     netip.Addr
	hostname string // the endpoint's host name, or its dashed address
	port     int32  // the port asked for, 0 when none was
}

// endpoints returns the addresses a headless Service's name stands for:
// ready ones (and not-ready ones when the Service publishes them), each
// with the port called portName of protocol proto when those are given
// (and only endpoints that have it).
func (c *cluster) endpoints(svc *v1.Service, portName, proto string) []endpoint {
	var out []endpoint
	seen := map[netip.Addr]bool{}
	for _, es := range c.src.EndpointSlices(svc.Namespace, svc.Name) {
		var port int32
		if portName != "" || proto != "" {
			found := false
			for _, p := range es.Ports {
				if p.Port != nil && (p.Name != nil && strings.EqualFold(*p.Name, portName) || p.Name == nil && portName == "") &&
					strings.EqualFold(string(protocolOf(derefProto(p.Protocol))), proto) {
					port, found = *p.Port, true
					break
				}
			}
			if !found {
				continue
			}
		}
		for _, ep := range es.Endpoints {
			if !svc.Spec.PublishNotReadyAddresses && ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, s := range ep.Addresses {
				a, err := netip.ParseAddr(s)
				if err != nil || seen[a] {
					continue
				}
				seen[a] = true
				host := dashed(a)
				if ep.Hostname != nil && *ep.Hostname != "" {
					host = strings.ToLower(*ep.Hostname)
				}
				out = append(out, endpoint{addr: a, hostname: host, port: port})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr.Less(out[j].addr) })
	return out
}

func derefProto(p *v1.Protocol) v1.Protocol {
	if p == nil {
		return ""
	}
	return *p
}

// dashed is an address as a DNS label: 10-244-1-5, or 2001-db8--1.
func dashed(a netip.Addr) string {
	return strings.ReplaceAll(strings.ReplaceAll(a.Unmap().String(), ".", "-"), ":", "-")
}

// endpointByHostname answers <host>.<svc>.<ns>.svc.<zone>: the endpoint of
// a headless Service with that host name (a pod's hostname and subdomain)
// or that dashed address.
func (c *cluster) endpointByHostname(q dnsmessage.Question, ns, name, host string) result {
	svc, ok := c.src.Service(ns, name)
	if !ok || !isHeadless(svc) {
		return nxdomain()
	}
	var addrs []netip.Addr
	for _, ep := range c.endpoints(svc, "", "") {
		if ep.hostname == host || dashed(ep.addr) == host {
			addrs = append(addrs, ep.addr)
		}
	}
	if len(addrs) == 0 {
		return nxdomain()
	}
	return c.addressResult(q, addrs)
}

// srvRecords answers _<port>._<proto>.<svc>.<ns>.svc.<zone> (port and
// proto given) and an SRV question for <svc>.<ns>.svc.<zone> (every named
// port). A ClusterIP Service's targets are its own name; a headless
// Service's, each endpoint by host name, whose addresses go into the
// additional section.
func (c *cluster) srvRecords(q dnsmessage.Question, ns, name, portName, proto string) result {
	svc, ok := c.src.Service(ns, name)
	if !ok || svc.Spec.Type == v1.ServiceTypeExternalName {
		return nxdomain()
	}
	named := portName != "" || proto != ""
	var ports []v1.ServicePort
	for _, p := range svc.Spec.Ports {
		if !named || strings.EqualFold(p.Name, portName) && strings.EqualFold(string(protocolOf(p.Protocol)), proto) {
			ports = append(ports, p)
		}
	}
	if len(ports) == 0 {
		if named {
			return nxdomain()
		}
		return nodata()
	}
	if q.Type != dnsmessage.TypeSRV && q.Type != dnsmessage.TypeALL {
		return nodata()
	}
	var r result
	self, _ := dnsmessage.NewName(c.serviceName(ns, name))
	if !isHeadless(svc) {
		for _, p := range ports {
			r.answers = append(r.answers, dnsmessage.Resource{Header: c.header(q.Name, dnsmessage.TypeSRV),
				Body: &dnsmessage.SRVResource{Priority: 0, Weight: 100, Port: uint16(p.Port), Target: self}})
		}
		for _, ip := range clusterIPs(svc) {
			if a, err := netip.ParseAddr(ip); err == nil {
				if rr, ok := c.addressRecord(self, dnsmessage.TypeALL, a); ok {
					r.additional = append(r.additional, rr)
				}
			}
		}
		return r
	}
	for _, p := range ports {
		eps := c.endpoints(svc, p.Name, string(protocolOf(p.Protocol)))
		if len(eps) == 0 {
			continue
		}
		weight := uint16(100 / len(eps))
		if weight == 0 {
			weight = 1
		}
		for _, ep := range eps {
			target, err := dnsmessage.NewName(ep.hostname + "." + c.serviceName(ns, name))
			if err != nil {
				continue
			}
			r.answers = append(r.answers, dnsmessage.Resource{Header: c.header(q.Name, dnsmessage.TypeSRV),
				Body: &dnsmessage.SRVResource{Priority: 0, Weight: weight, Port: uint16(ep.port), Target: target}})
			if rr, ok := c.addressRecord(target, dnsmessage.TypeALL, ep.addr); ok {
				r.additional = append(r.additional, rr)
			}
		}
	}
	if len(r.answers) == 0 {
		return nodata()
	}
	return r
}

// answerPod answers <dashed address>.<ns>.pod.<zone> with that address, as
// CoreDNS's "pods insecure" (kubeadm's default) does: the name only echoes
// the address it spells, so nothing is learnt from it.
func (c *cluster) answerPod(q dnsmessage.Question, l []string) result {
	switch len(l) {
	case 0, 1:
		return nodata()
	case 2:
		a, ok := undash(l[0])
		if !ok {
			return nxdomain()
		}
		return c.addressResult(q, []netip.Addr{a})
	}
	return nxdomain()
}

// undash reads a dashed address label: 10-244-1-5 or 2001-db8--1.
func undash(label string) (netip.Addr, bool) {
	if strings.Count(label, "-") == 3 && !strings.Contains(label, "--") {
		if a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ".")); err == nil && a.Is4() {
			return a, true
		}
	}
	if a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ":")); err == nil && a.Is6() && !a.Is4In6() {
		return a, true
	}
	return netip.Addr{}, false
}

// fqdn makes an ExternalName a DNS name; false when it is not one.
func fqdn(s string) (dnsmessage.Name, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return dnsmessage.Name{}, false
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	n, err := dnsmessage.NewName(s)
	return n, err == nil
}

func (c *cluster) header(name dnsmessage.Name, t dnsmessage.Type) dnsmessage.ResourceHeader {
	return dnsmessage.ResourceHeader{Name: name, Type: t, Class: dnsmessage.ClassINET, TTL: c.ttl}
}

// soaRecord is the zone's SOA: its minimum is the TTL of negative answers.
func (c *cluster) soaRecord() dnsmessage.Resource {
	zone, _ := dnsmessage.NewName(c.zone)
	ns, _ := dnsmessage.NewName("ns.dns." + c.zone)
	mbox, _ := dnsmessage.NewName("hostmaster." + c.zone)
	return dnsmessage.Resource{
		Header: dnsmessage.ResourceHeader{Name: zone, Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET, TTL: c.ttl},
		Body:   &dnsmessage.SOAResource{NS: ns, MBox: mbox, Serial: 1, Refresh: 7200, Retry: 1800, Expire: 86400, MinTTL: c.ttl},
	}
}
