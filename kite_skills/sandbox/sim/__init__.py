"""A simulated Kite Connect account for the sandbox (issue 18): a pure library, no MCP.

Which ``Simulation`` method backs each Kite MCP tool (tools-grouped.json modes; legacy tools by
name, tools-legacy.json and tools-legacy-oldest.json):

| grouped tool / mode | legacy tool | method |
|---|---|---|
| portfolio/profile | get_profile | profile |
| portfolio/margins | get_margins | margins |
| portfolio/holdings | get_holdings | holdings, holdings_summary, holdings_compact |
| portfolio/positions | get_positions | positions (Day rows then Net rows: adapter) |
| orders/list | get_orders | orders |
| orders/history | get_order_history | order_history |
| orders/trades | get_order_trades | order_trades |
| orders/all_trades | get_trades | trades |
| orders/place | place_order | place_order |
| orders/modify | modify_order | modify_order |
| orders/cancel | cancel_order | cancel_order |
| gtt/list | get_gtts | get_gtts |
| gtt/place | place_gtt_order | place_gtt |
| gtt/modify | modify_gtt_order | modify_gtt |
| gtt/delete | delete_gtt_order | delete_gtt |
| market/quote | get_quotes | quote |
| market/ltp | get_ltp | ltp |
| market/ohlc | get_ohlc | ohlc |
| market/historical | get_historical_data | historical_data |
| market/search | search_instruments | instruments + instrument_facts |
| alerts/get | alerts (mode get) | get_alerts, get_alert, get_alert_history |
| alerts/create | alerts (mode create) | create_alert |
| alerts/modify | alerts (mode modify) | modify_alert |
| alerts/delete | alerts (mode delete) | delete_alerts |
| mutual_funds/holdings | get_mf_holdings | mf_holdings |
| session/status, logout | login | none: always signed in (adapter) |

Time: the adapter calls ``advance_to(clock.now())`` before each call; tests call it directly.
"""

from __future__ import annotations

from .clock import IST, SimClock
from .errors import KiteConnectError, ScenarioError, ScenarioProblem
from .instruments import InstrumentFacts
from .scenario import Scenario, load_scenario, parse_scenario, scenario_names
from .simulation import Simulation

__all__ = [
    "IST",
    "InstrumentFacts",
    "KiteConnectError",
    "Scenario",
    "ScenarioError",
    "ScenarioProblem",
    "SimClock",
    "Simulation",
    "load_scenario",
    "parse_scenario",
    "scenario_names",
]
