package config

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// The configuration fields cloudcore's addresses are read from.
const (
	FieldWebSocketServer = "modules.edgeHub.websocket.server"
	FieldQUICServer      = "modules.edgeHub.quic.server"
	FieldHTTPServer      = "modules.edgeHub.httpServer"
	// FieldHubEnable is named when neither hub protocol is enabled.
	FieldHubEnable = "modules.edgeHub.websocket.enable"
	// FieldTunnelServer is where edgeStream dials cloudcore's cloudStream.
	FieldTunnelServer = "modules.edgeStream.server"
)

// TunnelFix is what to do when cloudcore's stream tunnel does not answer:
// upstream cloudcore ships with cloudStream off, so the usual cause is the
// cloud's configuration, not the network.
const TunnelFix = "turn on cloudStream in cloudcore.yaml (modules.cloudStream.enable: true, tunnelPort " + DefaultTunnelPort +
	") and restart cloudcore, open the port in both firewalls, or join with --stream=false to go without kubectl logs, exec and metrics"

// Transports a cloudcore endpoint is reached over. A QUIC port answers on
// UDP only, so a TCP connection to it proves nothing.
const (
	TransportTCP  = "tcp"
	TransportQUIC = "quic"
)

// DefaultHTTPSPort is the port of an httpServer URL that names none, as
// edgehub's HTTPS client assumes.
const DefaultHTTPSPort = "443"

// CloudEndpoint is an address of cloudcore that edgehub connects to, with
// the configuration field it is read from, so that a failure can name the
// field to correct.
type CloudEndpoint struct {
	// Name says what the endpoint is for: "cloudcore websocket",
	// "cloudcore quic" or "cloudcore https".
	Name string
	// Field is the configuration field, e.g. modules.edgeHub.websocket.server.
	Field string
	// Value is the field's value as the configuration has it.
	Value string
	// Address is the host:port to connect to; empty when Value is
	// malformed.
	Address string
	// Transport is TransportTCP or TransportQUIC.
	Transport string
}

// CloudCore are the addresses of cloudcore an edge node needs.
type CloudCore struct {
	// Hub is the server of the enabled hub protocol: websocket or quic.
	Hub CloudEndpoint
	// Certificates is httpServer, where the node fetches the CA and has its
	// certificate issued.
	Certificates CloudEndpoint
	// Tunnel is cloudStream's tunnel port, which edgeStream dials so that
	// the API server reaches the node for logs, exec, attach and metrics;
	// nil when edgeStream is off.
	Tunnel *CloudEndpoint
}

// Endpoints lists the hub, the certificate server, then the tunnel when
// edgeStream is on.
func (c CloudCore) Endpoints() []CloudEndpoint {
	out := []CloudEndpoint{c.Hub, c.Certificates}
	if c.Tunnel != nil {
		out = append(out, *c.Tunnel)
	}
	return out
}

// CloudEndpoints reads cloudcore's addresses from a configuration the way
// edgehub uses them: the hub is the server of the enabled protocol
// (websocket first, as edgehub picks it when both are on), and the
// certificate server is httpServer, an https URL whose port defaults to
// 443. Both endpoints are returned even when one is malformed, with an
// empty Address; the error is then an *InvalidError with one entry per
// malformed field, each naming the field, its value and the expected form.
func CloudEndpoints(cfg *v1alpha2.EdgeCoreConfig) (CloudCore, error) {
	if cfg == nil || cfg.Modules == nil || cfg.Modules.EdgeHub == nil {
		return CloudCore{}, &InvalidError{What: "cloudcore endpoints", Errs: field.ErrorList{
			field.Required(field.NewPath("modules", "edgeHub"), "the section is empty or null: remove the line to use the defaults, or fill it in")}}
	}
	hub := cfg.Modules.EdgeHub
	var errs field.ErrorList
	var c CloudCore
	switch {
	case hub.WebSocket != nil && hub.WebSocket.Enable:
		c.Hub = CloudEndpoint{Name: "cloudcore websocket", Field: FieldWebSocketServer, Value: hub.WebSocket.Server, Transport: TransportTCP}
		c.Hub.Address, errs = hostPort(c.Hub, DefaultWSPort, errs)
	case hub.Quic != nil && hub.Quic.Enable:
		c.Hub = CloudEndpoint{Name: "cloudcore quic", Field: FieldQUICServer, Value: hub.Quic.Server, Transport: TransportQUIC}
		c.Hub.Address, errs = hostPort(c.Hub, DefaultQuicPort, errs)
	default:
		c.Hub = CloudEndpoint{Name: "cloudcore hub", Field: FieldHubEnable, Value: "false", Transport: TransportTCP}
		errs = append(errs, field.Invalid(field.NewPath(FieldHubEnable), false,
			"neither websocket nor quic is enabled, so edgehub has no way to cloudcore: set modules.edgeHub.websocket.enable "+
				"(or modules.edgeHub.quic.enable) to true"))
	}
	c.Certificates = CloudEndpoint{Name: "cloudcore https", Field: FieldHTTPServer, Value: hub.HTTPServer, Transport: TransportTCP}
	c.Certificates.Address, errs = httpsHostPort(c.Certificates, errs)
	if s := cfg.Modules.EdgeStream; s != nil && s.Enable {
		// edgeStream uses server as it is, behind wss:// (a host:port).
		t := CloudEndpoint{Name: "cloudcore stream", Field: FieldTunnelServer, Value: s.TunnelServer, Transport: TransportTCP}
		t.Address, errs = hostPort(t, DefaultTunnelPort, errs)
		c.Tunnel = &t
	}
	if len(errs) > 0 {
		return c, &InvalidError{What: "cloudcore endpoints", Errs: errs}
	}
	return c, nil
}

// hostPort checks a hub server, which edgehub uses as it is: "host:port",
// without a scheme.
func hostPort(e CloudEndpoint, examplePort string, errs field.ErrorList) (string, field.ErrorList) {
	path := field.NewPath(e.Field)
	example := "192.168.1.10:" + examplePort
	if e.Value == "" {
		port := "hub port"
		if e.Field == FieldTunnelServer {
			port = "stream tunnel port"
		}
		return "", append(errs, field.Required(path, "cloudcore's address and "+port+", for example "+example+
			", as `edgecore.exe join` writes it"))
	}
	host, port, err := net.SplitHostPort(e.Value)
	if err != nil || host == "" || strings.ContainsAny(e.Value, " \t/") || !validPort(port) {
		return "", append(errs, field.Invalid(path, e.Value, "expected HOST:PORT without a scheme, for example "+example))
	}
	if why := hostProblem(host, false); why != "" {
		return "", append(errs, field.Invalid(path, e.Value, why+"; fix: use "+example))
	}
	return e.Value, errs
}

// httpsHostPort checks httpServer, to which edgehub appends /ca.crt and
// /edge.crt: an https URL with nothing after the port. A trailing slash
// would make those paths start with //, which cloudcore's server answers
// with a redirect that drops the certificate request's body.
func httpsHostPort(e CloudEndpoint, errs field.ErrorList) (string, field.ErrorList) {
	path := field.NewPath(e.Field)
	const example = "https://192.168.1.10:" + DefaultCertPort
	if e.Value == "" {
		return "", append(errs, field.Required(path, "cloudcore's certificate server, for example "+example+
			", as `edgecore.exe join` writes it"))
	}
	u, err := url.Parse(e.Value)
	ok := err == nil && u.Scheme == "https" && u.Hostname() != "" && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == ""
	addr := ""
	if ok && u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), DefaultHTTPSPort)
	} else if ok {
		// url.Parse leaves "host:1:2" to the dial; net.SplitHostPort
		// refuses it, as the dial would.
		_, port, err := net.SplitHostPort(u.Host)
		ok = err == nil && validPort(port)
		addr = u.Host
	}
	if !ok {
		return "", append(errs, field.Invalid(path, e.Value, "expected https://HOST:PORT with nothing after the port, for example "+example))
	}
	if why := hostProblem(u.Hostname(), false); why != "" {
		return "", append(errs, field.Invalid(path, e.Value, why+"; fix: use "+example))
	}
	return addr, errs
}

// DialTCP opens and closes a TCP connection to address, which is all a
// websocket or https port of cloudcore needs to prove it is reachable. It is
// the one TCP reach check: `config`, `join` and preflight all use it.
func DialTCP(ctx context.Context, address string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return err
	}
	return conn.Close()
}

// DialReach is the Reach of the real network: DialTCP bounded by timeout,
// so that an unreachable cloudcore costs seconds, not the operating
// system's minutes.
func DialReach(timeout time.Duration) Reach {
	return func(addr string) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return DialTCP(ctx, addr)
	}
}
