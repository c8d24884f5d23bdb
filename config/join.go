package config

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/redact"
)

// Ports cloudcore listens on by default.
const (
	DefaultCertPort   = "10002"
	DefaultQuicPort   = "10001"
	DefaultTunnelPort = "10004"
	DefaultWSPort     = "10000"
)

// Hub protocols an edge node can talk to cloudcore with.
const (
	HubWebSocket = "websocket"
	HubQUIC      = "quic"
)

// JoinOptions are the inputs of a configuration for joining a cloud, named
// after keadm join's flags so that the same commands work.
type JoinOptions struct {
	CloudCoreIPPort       string   // --cloudcore-ipport, -e
	Token                 string   // --token, -t
	EdgeNodeName          string   // --edgenode-name, -i
	CertPort              string   // --certport, -s
	Labels                []string // --labels, -l (key=value)
	RemoteRuntimeEndpoint string   // --remote-runtime-endpoint, -p
	HubProtocol           string   // --hub-protocol
	// NoStream is --stream=false: edgeStream stays off, and with it
	// kubectl logs, exec, attach and the node's metrics through cloudcore.
	// The zero value turns the tunnel on, so every caller that builds
	// options gets the default the operator gets.
	NoStream bool
	// Services is --services: the switch of Services at the node
	// (GateServices). nil leaves it to the command: join turns it on when
	// it writes the pod network, config leaves it off.
	Services *bool
}

// Reach reports whether cloudcore answers at a host:port; nil means yes.
type Reach func(addr string) error

// joinToken is what `keadm gettoken` prints: the hex SHA-256 of the cloud's
// CA certificate, a dot, then a signed JWT (three base64url segments).
var joinToken = regexp.MustCompile(`^[0-9a-f]{64}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)

// JoinConfig builds the complete configuration of a node joining the cloud
// at o.CloudCoreIPPort, for host. reach, when not nil, is asked whether
// cloudcore's hub and certificate ports answer. Problems are returned
// together, each naming the flag, the value and the fix.
func JoinConfig(o JoinOptions, host Host, reach Reach) (*v1alpha2.EdgeCoreConfig, []Rewrite, error) {
	var errs field.ErrorList
	flag := func(name string) *field.Path { return field.NewPath("--" + name) }

	cloudHost, hubPort, err := net.SplitHostPort(o.CloudCoreIPPort)
	switch {
	case o.CloudCoreIPPort == "":
		errs = append(errs, field.Required(flag("cloudcore-ipport"), "give cloudcore's address and hub port, for example 192.168.1.10:10000"))
	case err != nil || cloudHost == "" || !validPort(hubPort):
		errs = append(errs, field.Invalid(flag("cloudcore-ipport"), o.CloudCoreIPPort, "expected HOST:PORT, for example 192.168.1.10:10000"))
	case hostProblem(cloudHost, false) != "":
		errs = append(errs, field.Invalid(flag("cloudcore-ipport"), o.CloudCoreIPPort,
			hostProblem(cloudHost, false)+"; fix: give cloudcore's address and hub port, for example 192.168.1.10:10000"))
	}
	certPort := o.CertPort
	if certPort == "" {
		certPort = DefaultCertPort
	}
	if !validPort(certPort) {
		errs = append(errs, field.Invalid(flag("certport"), o.CertPort, "expected a port number between 1 and 65535 (cloudcore's default is 10002)"))
	}
	token := strings.TrimSpace(o.Token)
	if token == "" {
		errs = append(errs, field.Required(flag("token"), "run `keadm gettoken` on the cloud side and pass its output"))
	} else if err := CheckJoinToken(flag("token"), token); err != nil {
		errs = append(errs, err)
	}
	protocol := o.HubProtocol
	if protocol == "" {
		protocol = HubWebSocket
	}
	if protocol != HubWebSocket && protocol != HubQUIC {
		errs = append(errs, field.NotSupported(flag("hub-protocol"), o.HubProtocol, []string{HubWebSocket, HubQUIC}))
	}
	nodeName := o.EdgeNodeName
	if nodeName == "" {
		nodeName = NodeName(host.Hostname)
	} else if msgs := apivalidation.IsDNS1123Subdomain(nodeName); len(msgs) > 0 {
		errs = append(errs, field.Invalid(flag("edgenode-name"), nodeName,
			strings.Join(msgs, "; ")+"; for example "+NodeName(nodeName)))
	}
	labels, labelErrs := parseLabels(o.Labels, flag("labels"))
	errs = append(errs, labelErrs...)
	if len(errs) > 0 {
		return nil, nil, &InvalidError{What: "join options", Errs: errs}
	}

	c, err := Sample(KindDefault, host)
	if err != nil {
		return nil, nil, err
	}
	hub := c.Modules.EdgeHub
	hub.Enable = true
	hub.Token = token
	hub.HTTPServer = "https://" + net.JoinHostPort(cloudHost, certPort)
	hub.WebSocket.Enable = protocol == HubWebSocket
	hub.Quic.Enable = protocol == HubQUIC
	hub.WebSocket.Server = net.JoinHostPort(cloudHost, DefaultWSPort)
	hub.Quic.Server = net.JoinHostPort(cloudHost, DefaultQuicPort)
	if protocol == HubQUIC {
		hub.Quic.Server = o.CloudCoreIPPort
	} else {
		hub.WebSocket.Server = o.CloudCoreIPPort
	}
	// edgeStream dials cloudcore's tunnel on the cloud's host and announces
	// edged's nodeIP (internal/modules passes it), which is the address the
	// cloud reaches this host at: host.NodeIP as the caller chose it.
	s := c.Modules.EdgeStream
	s.Enable = !o.NoStream
	s.TunnelServer = net.JoinHostPort(cloudHost, DefaultTunnelPort)
	e := c.Modules.Edged
	e.HostnameOverride = nodeName
	if len(labels) > 0 {
		e.NodeLabels = labels
	}
	if o.RemoteRuntimeEndpoint != "" {
		e.TailoredKubeletConfig.ContainerRuntimeEndpoint = o.RemoteRuntimeEndpoint
		e.TailoredKubeletConfig.ImageServiceEndpoint = o.RemoteRuntimeEndpoint
	}
	if o.Services != nil {
		// The DNS responder's address is the pod network's, which the
		// node reads from the network's record when it starts.
		SetServices(c, *o.Services, netip.Addr{})
	}
	rewrites := Normalize(c, host.GOOS)
	if errs := validateAll(c, host.GOOS); len(errs) > 0 {
		return nil, nil, &InvalidError{What: "generated configuration", Errs: errs}
	}
	if reach != nil {
		if err := reachCloud(c, reach); err != nil {
			return nil, nil, err
		}
	}
	return c, rewrites, nil
}

// reachCloud asks reach whether cloudcore answers at the endpoints the
// configuration c names, read the way edgehub reads them. Reach connects
// over TCP, which a QUIC hub does not answer (QUIC is UDP): that port is
// left to preflight, which speaks QUIC to it.
func reachCloud(c *v1alpha2.EdgeCoreConfig, reach Reach) error {
	cloud, err := CloudEndpoints(c)
	if err != nil {
		return err
	}
	flags := map[string]string{cloud.Hub.Field: "--cloudcore-ipport", cloud.Certificates.Field: "--certport", FieldTunnelServer: "--stream"}
	var unreachable field.ErrorList
	for _, e := range cloud.Endpoints() {
		if e.Transport != TransportTCP {
			continue
		}
		if err := reach(e.Address); err != nil {
			fix := "check that cloudcore runs, that the port is open in both firewalls, or pass --offline to write the configuration without checking"
			if e.Field == FieldTunnelServer {
				fix = TunnelFix
			}
			unreachable = append(unreachable, field.Invalid(field.NewPath(flags[e.Field]), e.Address,
				fmt.Sprintf("cloudcore does not answer (%v): %s", err, fix)))
		}
	}
	if len(unreachable) > 0 {
		return &InvalidError{What: "join options", Errs: unreachable}
	}
	return nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536
}

// CheckJoinToken refuses token, given as path, unless it has the form
// `keadm gettoken` prints; the error shows it redacted.
func CheckJoinToken(path *field.Path, token string) *field.Error {
	if joinToken.MatchString(token) {
		return nil
	}
	return field.Invalid(path, redactToken(token), "not a KubeEdge join token: pass the whole output of `keadm gettoken` (64 hex characters, a dot, then a JWT)")
}

// redactToken keeps a token out of error messages and logs: its signature part is
// a credential.
func redactToken(token string) string {
	if len(token) <= 12 {
		return redact.Secret
	}
	return token[:12] + "…" + redact.Secret
}

func parseLabels(in []string, path *field.Path) (map[string]string, field.ErrorList) {
	var errs field.ErrorList
	labels := map[string]string{}
	for _, l := range in {
		for _, kv := range strings.Split(l, ",") {
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				errs = append(errs, field.Invalid(path, kv, "expected key=value, for example site=plant-1"))
				continue
			}
			for _, msg := range apivalidation.IsQualifiedName(k) {
				errs = append(errs, field.Invalid(path, kv, "label key: "+msg))
			}
			for _, msg := range apivalidation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(path, kv, "label value: "+msg))
			}
			labels[k] = v
		}
	}
	return labels, errs
}
