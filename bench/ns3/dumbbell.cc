// The ns-3 equivalent of longhaul's dumbbell benchmark scenario, for a speed comparison.
//
// One TCP flow (TcpLinuxReno, 1448-byte segments, SACK and timestamps on as ns-3 defaults)
// from a left leaf to a right leaf of a PointToPointDumbbellHelper: access links of 10 × the
// bottleneck rate and 1 µs, a bottleneck of RATE and one-way DELAY (RTT/2 minus the access
// delays), and a FIFO queue of one bandwidth-delay product at the bottleneck (the traffic-control
// layer's default FqCoDel is replaced by a FifoQueueDisc of that size). Socket buffers are
// 4 × BDP and MinRto 200 ms, the settings of the ns-3 measurement in bench/README.md
// ("Simulator benchmarks").
//
// Prints one line of key=value pairs: simulated seconds, CPU seconds (std::clock), executed
// events, delivered payload bytes and packets, goodput. bench/ns3/run.sh builds and runs it;
// crates/sim/benches/dumbbell.rs compares it with longhaul-sim on the same scenario.
//
// Usage: dumbbell --rateMbps=100 --rttMs=100 --duration=60

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-layout-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <ctime>
#include <iostream>

using namespace ns3;

int main(int argc, char* argv[]) {
    double rateMbps = 100;
    double rttMs = 100;
    double duration = 60;
    uint32_t segment = 1448;
    CommandLine cmd;
    cmd.AddValue("rateMbps", "bottleneck rate, Mb/s", rateMbps);
    cmd.AddValue("rttMs", "base round-trip time, ms", rttMs);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.Parse(argc, argv);

    double bdpBytes = rateMbps * 1e6 / 8 * rttMs / 1e3;
    uint32_t bdpPackets = std::max<uint32_t>(10, bdpBytes / 1500);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpLinuxReno"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * bdpBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * bdpBytes));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));

    double accessUs = 1;
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rateMbps * 10e6)));
    access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(accessUs)));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rateMbps * 1e6)));
    bottleneck.SetChannelAttribute(
        "Delay", TimeValue(MicroSeconds(rttMs * 1e3 / 2 - 2 * accessUs)));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10p"));
    PointToPointDumbbellHelper d(1, access, 1, access, bottleneck);

    InternetStackHelper stack;
    d.InstallStack(stack);
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                          StringValue(std::to_string(bdpPackets) + "p"));
    NetDeviceContainer core;
    core.Add(d.GetLeft()->GetDevice(0));
    core.Add(d.GetRight()->GetDevice(0));
    // Installed before addresses are assigned, so the default queue disc is never added.
    fifo.Install(core);
    d.AssignIpv4Addresses(Ipv4AddressHelper("10.1.1.0", "255.255.255.0"),
                          Ipv4AddressHelper("10.2.1.0", "255.255.255.0"),
                          Ipv4AddressHelper("10.3.1.0", "255.255.255.0"));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5001;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(d.GetRight(0));
    sinkApp.Start(Seconds(0));
    BulkSendHelper source("ns3::TcpSocketFactory",
                          InetSocketAddress(d.GetRightIpv4Address(0), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    source.SetAttribute("SendSize", UintegerValue(segment));
    ApplicationContainer sourceApp = source.Install(d.GetLeft(0));
    sourceApp.Start(Seconds(0));

    Simulator::Stop(Seconds(duration));
    std::clock_t c0 = std::clock();
    Simulator::Run();
    double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
    uint64_t bytes = DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();
    std::cout << "ns3 sim_s=" << duration << " cpu_s=" << cpu << " events=" << events
              << " bytes=" << bytes << " packets=" << bytes / segment
              << " goodput_mbps=" << bytes * 8 / duration / 1e6 << std::endl;
    return 0;
}
