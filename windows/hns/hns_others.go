//go:build !windows

package hns

import "net/netip"

// Client is the host's HNS; off Windows there is none and every call
// returns ErrNotWindows.
type Client struct{}

// New returns the host's HNS client.
func New() Client { return Client{} }

func (Client) NetworkByName(string) (*Network, error)                 { return nil, ErrNotWindows }
func (Client) CreateNetwork(NetworkSpec) (*Network, error)            { return nil, ErrNotWindows }
func (Client) DeleteNetwork(string) error                             { return ErrNotWindows }
func (Client) EndpointByName(string) (*Endpoint, error)               { return nil, ErrNotWindows }
func (Client) CreateEndpoint(string, EndpointSpec) (*Endpoint, error) { return nil, ErrNotWindows }
func (Client) AttachHost(string) error                                { return ErrNotWindows }
func (Client) DeleteEndpoint(string) error                            { return ErrNotWindows }
func (Client) Forwarding(netip.Addr) (Interface, error)               { return Interface{}, ErrNotWindows }
func (Client) EnableForwarding(netip.Addr) error                      { return ErrNotWindows }
func (Client) LoadBalancing() (LoadBalancing, error)                  { return LoadBalancing{}, ErrNotWindows }
func (Client) LoadBalancers() ([]LoadBalancer, error)                 { return nil, ErrNotWindows }
func (Client) DeleteLoadBalancer(string) error                        { return ErrNotWindows }
func (Client) NetworkEndpoints(string) ([]NetworkEndpoint, error)     { return nil, ErrNotWindows }
