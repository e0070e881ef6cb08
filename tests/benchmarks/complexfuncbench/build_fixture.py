"""Regenerate the synthetic ComplexFuncBench fixture.

Run: python tests/benchmarks/complexfuncbench/build_fixture.py

Every sample, id, value and response here is invented for callbench's tests; only the record layout
and the style of function names follow the public data set.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).parents[3] / "src/callbench/benchmarks/complexfuncbench/fixture.jsonl"

S, N = "string", "number"


def fn(name: str, desc: str, required: list[str], **props: tuple[str, str]) -> dict:
    """A function in the data set's style: OpenAI function objects without the type wrapper."""
    return {
        "name": name,
        "description": desc,
        "parameters": {
            "type": "object",
            "properties": {p: {"type": t, "description": d} for p, (t, d) in props.items()},
            "required": required,
        },
    }


CUR = (S, "Currency code, e.g. USD. Default value is USD.")
LANG = (S, "Language code, e.g. en-us. Default value is en-us.")
F = {
    "Search_Hotel_Destination": fn(
        "Search_Hotel_Destination",
        "Find a dest_id and search_type for a place name.",
        ["query"],
        query=(S, "Place name"),
    ),
    "Search_Hotels": fn(
        "Search_Hotels",
        "Search hotels at a destination between two dates.",
        ["dest_id", "search_type", "arrival_date", "departure_date"],
        dest_id=(S, "Destination id from Search_Hotel_Destination"),
        search_type=(S, "search_type from Search_Hotel_Destination"),
        arrival_date=(S, "Check-in date yyyy-mm-dd"),
        departure_date=(S, "Check-out date yyyy-mm-dd"),
        adults=(N, "Number of adults. Default value is 1."),
        room_qty=(N, "Number of rooms. Default value is 1."),
        categories_filter=(S, "Comma separated filter ids from Get_Filter"),
        sort_by=(S, "Sort id from Get_Sort_By"),
        currency_code=CUR,
        languagecode=LANG,
    ),
    "Get_Filter": fn(
        "Get_Filter",
        "List the filters available for a hotel search, with counts.",
        ["dest_id", "search_type", "arrival_date", "departure_date"],
        dest_id=(S, "Destination id"),
        search_type=(S, "search_type"),
        arrival_date=(S, "yyyy-mm-dd"),
        departure_date=(S, "yyyy-mm-dd"),
        categories_filter=(S, "Comma separated filter ids already applied"),
        languagecode=LANG,
    ),
    "Get_Hotel_Reviews(Tips)_Sort_Option": fn(
        "Get_Hotel_Reviews(Tips)_Sort_Option",
        "Sort options for the review tips of a hotel.",
        ["hotel_id"],
        hotel_id=(N, "Hotel id from Search_Hotels"),
        languagecode=LANG,
    ),
    "Get_Hotel_Reviews(Tips)": fn(
        "Get_Hotel_Reviews(Tips)",
        "Review tips of a hotel in a given order.",
        ["hotel_id"],
        hotel_id=(N, "Hotel id"),
        sort_option_id=(S, "Sort option id. Default value is sort_most_relevant."),
        languagecode=LANG,
    ),
    "Get_Hotel_Policies": fn(
        "Get_Hotel_Policies",
        "House rules and policies of a hotel.",
        ["hotel_id"],
        hotel_id=(N, "Hotel id"),
        languagecode=LANG,
    ),
    "Search_Flight_Location": fn(
        "Search_Flight_Location", "Find airport or city ids for a place.", ["query"], query=(S, "Place name")
    ),
    "Search_Flights_Multi_Stops": fn(
        "Search_Flights_Multi_Stops",
        "Search multi-stop flights.",
        ["legs"],
        legs=(S, "JSON list of legs, each {fromId, toId, date}"),
        cabinClass=(S, "ECONOMY, PREMIUM_ECONOMY, BUSINESS or FIRST"),
        adults=(N, "Number of adults. Default value is 1."),
        sort=(S, "BEST, CHEAPEST or FASTEST. Default value is BEST."),
        currency_code=CUR,
    ),
    "Get_Flight_Details": fn(
        "Get_Flight_Details",
        "Details of one flight offer.",
        ["token"],
        token=(S, "Offer token from a flight search"),
        currency_code=CUR,
    ),
    "Get_Min_Price": fn(
        "Get_Min_Price",
        "Cheapest fares around a departure date.",
        ["fromId", "toId", "departDate"],
        fromId=(S, "Origin id"),
        toId=(S, "Destination id"),
        departDate=(S, "yyyy-mm-dd"),
        cabinClass=(S, "Cabin class"),
        currency_code=CUR,
    ),
    "Search_Car_Location": fn(
        "Search_Car_Location", "Find coordinates of a car rental place.", ["query"], query=(S, "Place name")
    ),
    "Location_to_Lat_Long": fn(
        "Location_to_Lat_Long", "Geocode a place name.", ["query"], query=(S, "Place")
    ),
    "Search_Car_Rentals": fn(
        "Search_Car_Rentals",
        "Search rental cars between two places and times.",
        [
            "pick_up_latitude",
            "pick_up_longitude",
            "drop_off_latitude",
            "drop_off_longitude",
            "pick_up_date",
            "drop_off_date",
            "pick_up_time",
            "drop_off_time",
        ],
        pick_up_latitude=(N, "Latitude"),
        pick_up_longitude=(N, "Longitude"),
        drop_off_latitude=(N, "Latitude"),
        drop_off_longitude=(N, "Longitude"),
        pick_up_date=(S, "yyyy-mm-dd"),
        drop_off_date=(S, "yyyy-mm-dd"),
        pick_up_time=(S, "hh:mm"),
        drop_off_time=(S, "hh:mm"),
        driver_age=(N, "Driver age. Default value is 30."),
        currency_code=CUR,
    ),
    "Vehicle_Details": fn(
        "Vehicle_Details",
        "Details of one rental vehicle.",
        ["vehicle_id", "search_key"],
        vehicle_id=(S, "Vehicle id"),
        search_key=(S, "search_key from Search_Car_Rentals"),
        currency_code=CUR,
    ),
    "Search_Attraction_Location": fn(
        "Search_Attraction_Location", "Find attraction products and places.", ["query"], query=(S, "Name")
    ),
    "Get_Attraction_Details": fn(
        "Get_Attraction_Details",
        "Details of an attraction product.",
        ["slug"],
        slug=(S, "productSlug"),
        currency_code=CUR,
    ),
    "Get_Availability": fn(
        "Get_Availability",
        "Time slots of an attraction on a date.",
        ["slug"],
        slug=(S, "productSlug"),
        date=(S, "yyyy-mm-dd"),
        currency_code=CUR,
    ),
    "Taxi_Search_Location": fn(
        "Taxi_Search_Location", "Find the googlePlaceId of a place for a taxi.", ["query"], query=(S, "Place")
    ),
    "Search_Taxi": fn(
        "Search_Taxi",
        "Price a taxi ride.",
        ["pick_up_place_id", "drop_off_place_id", "pick_up_date", "pick_up_time"],
        pick_up_place_id=(S, "googlePlaceId"),
        drop_off_place_id=(S, "googlePlaceId"),
        pick_up_date=(S, "yyyy-mm-dd"),
        pick_up_time=(S, "hh:mm"),
        currency_code=CUR,
    ),
}


def ok(data: object) -> dict:
    return {"status": True, "message": "Success", "timestamp": 1730000000000, "data": data}


def c(name: str, **arguments: object) -> dict:
    return {"name": name, "arguments": arguments}


def sample(sid: str, query: str, fns: list[str], steps: list[list[tuple[dict, object]]], answer: str) -> dict:
    conv: list[dict] = [{"role": "user", "content": query}]
    for step in steps:
        conv.append({"role": "assistant", "function_call": [call for call, _ in step]})
        conv.append({"role": "observation", "content": [resp for _, resp in step]})
    conv.append({"role": "assistant", "content": answer})
    return {"id": sid, "conversations": conv, "functions": [F[n] for n in fns]}


def hotel_reviews(sid: str, city: str, dest: str, hotel: int, hname: str, dates: tuple[str, str]) -> dict:
    a, d = dates
    return sample(
        sid,
        f"I'll stay in {city} from {a} to {d} with my partner (2 adults). Take the first hotel you find, "
        "show me its house rules and its review tips ordered by the newest first.",
        [
            "Search_Hotel_Destination",
            "Search_Hotels",
            "Get_Hotel_Reviews(Tips)_Sort_Option",
            "Get_Hotel_Reviews(Tips)",
            "Get_Hotel_Policies",
            "Get_Flight_Details",
        ],
        [
            [(c("Search_Hotel_Destination", query=city), ok([{"dest_id": dest, "search_type": "CITY"}]))],
            [
                (
                    c(
                        "Search_Hotels",
                        dest_id=dest,
                        search_type="CITY",
                        arrival_date=a,
                        departure_date=d,
                        adults=2,
                    ),
                    ok({"hotels": [{"hotel_id": hotel, "name": hname}]}),
                )
            ],
            [
                (
                    c("Get_Hotel_Reviews(Tips)_Sort_Option", hotel_id=hotel),
                    ok([{"id": "sort_most_relevant"}, {"id": "sort_recent_desc"}]),
                ),
                (c("Get_Hotel_Policies", hotel_id=hotel), ok({"pets": "not allowed", "checkin": "15:00"})),
            ],
            [
                (
                    c("Get_Hotel_Reviews(Tips)", hotel_id=hotel, sort_option_id="sort_recent_desc"),
                    ok([{"tip": "Quiet rooms at the back."}]),
                )
            ],
        ],
        f"{hname}: pets are not allowed and check-in is from 15:00. Newest tip: quiet rooms at the back.",
    )


def flights_legs(sid: str) -> dict:
    legs = [
        {"fromId": "BOM.AIRPORT", "toId": "AMD.AIRPORT", "date": "2024-11-20"},
        {"fromId": "AMD.AIRPORT", "toId": "DEL.AIRPORT", "date": "2024-11-24"},
        {"fromId": "DEL.AIRPORT", "toId": "BOM.AIRPORT", "date": "2024-11-29"},
    ]
    return sample(
        sid,
        "Plan a business class trip Mumbai -> Ahmedabad on 2024-11-20, Ahmedabad -> Delhi on 2024-11-24 "
        "and back to Mumbai on 2024-11-29, cheapest first, prices in INR, then give me the details of the "
        "top offer.",
        ["Search_Flight_Location", "Search_Flights_Multi_Stops", "Get_Flight_Details", "Get_Min_Price"],
        [
            [
                (c("Search_Flight_Location", query="Mumbai"), ok([{"id": "BOM.AIRPORT"}])),
                (c("Search_Flight_Location", query="Ahmedabad"), ok([{"id": "AMD.AIRPORT"}])),
                (c("Search_Flight_Location", query="Delhi"), ok([{"id": "DEL.AIRPORT"}])),
            ],
            [
                (
                    c(
                        "Search_Flights_Multi_Stops",
                        legs=json.dumps(legs),
                        cabinClass="BUSINESS",
                        sort="CHEAPEST",
                        currency_code="INR",
                    ),
                    ok({"flightOffers": [{"token": "d6a1f_H4sIAAAAAAAA_3W0", "price": 61234}]}),
                )
            ],
            [
                (
                    c("Get_Flight_Details", token="d6a1f_H4sIAAAAAAAA_3W0", currency_code="INR"),
                    ok({"segments": 3, "price": 61234, "airline": "Example Air"}),
                )
            ],
        ],
        "The cheapest business itinerary costs 61,234 INR with Example Air across 3 segments.",
    )


def car_rental(sid: str) -> dict:
    return sample(
        sid,
        "Rent a car at Berlin Hauptbahnhof on 2024-12-03 at 10:00 and drop it at Munich Airport on "
        "2024-12-06 at 18:00 for a 45 year old driver; tell me about the first car offered.",
        ["Search_Car_Location", "Search_Car_Rentals", "Vehicle_Details", "Search_Flight_Location"],
        [
            [
                (
                    c("Search_Car_Location", query="Berlin Hauptbahnhof"),
                    ok([{"coordinates": {"latitude": 52.5251, "longitude": 13.3694}}]),
                ),
                (
                    c("Search_Car_Location", query="Munich Airport"),
                    ok([{"coordinates": {"latitude": 48.3538, "longitude": 11.7861}}]),
                ),
            ],
            [
                (
                    c(
                        "Search_Car_Rentals",
                        pick_up_latitude=52.5251,
                        pick_up_longitude=13.3694,
                        drop_off_latitude=48.3538,
                        drop_off_longitude=11.7861,
                        pick_up_date="2024-12-03",
                        drop_off_date="2024-12-06",
                        pick_up_time="10:00",
                        drop_off_time="18:00",
                        driver_age=45,
                    ),
                    ok({"search_key": "eyJkcml2ZXJzQWdlIjo0NX0", "vehicles": [{"vehicle_id": "701993"}]}),
                )
            ],
            [
                (
                    c("Vehicle_Details", vehicle_id="701993", search_key="eyJkcml2ZXJzQWdlIjo0NX0"),
                    ok({"model": "VW Golf", "price": 312.5}),
                )
            ],
        ],
        "The first offer is a VW Golf for 312.50 USD.",
    )


def cross(sid: str, dest: str, date: str) -> dict:
    return sample(
        sid,
        f"I fly from Shanghai to Tokyo on {date}; find the cheapest fare that day and price a taxi from "
        f"Narita Airport to {dest} at 16:00 the same day.",
        [
            "Search_Flight_Location",
            "Get_Min_Price",
            "Taxi_Search_Location",
            "Search_Taxi",
            "Location_to_Lat_Long",
        ],
        [
            [
                (c("Search_Flight_Location", query="Shanghai"), ok([{"id": "SHA.CITY"}])),
                (c("Search_Flight_Location", query="Tokyo"), ok([{"id": "TYO.CITY"}])),
                (
                    c("Taxi_Search_Location", query="Narita Airport"),
                    ok([{"googlePlaceId": "ChIJVze90XnzImARoRp3YqEpbtU"}]),
                ),
                (
                    c("Taxi_Search_Location", query=dest),
                    ok([{"googlePlaceId": "ChIJ2Y3Wm_OMGGARH0hb3Ca5d5Y"}]),
                ),
            ],
            [
                (
                    c("Get_Min_Price", fromId="SHA.CITY", toId="TYO.CITY", departDate=date),
                    ok([{"price": 212.0}]),
                ),
                (
                    c(
                        "Search_Taxi",
                        pick_up_place_id="ChIJVze90XnzImARoRp3YqEpbtU",
                        drop_off_place_id="ChIJ2Y3Wm_OMGGARH0hb3Ca5d5Y",
                        pick_up_date=date,
                        pick_up_time="16:00",
                    ),
                    ok({"results": [{"price": 189.0}]}),
                ),
            ],
        ],
        "The cheapest flight is 212 USD and the taxi costs about 189 USD.",
    )


def build() -> list[dict]:
    filters = "class::4,class::5,facility::107,free_cancellation::1,reviewscorebuckets::80,distance::3000"
    return [
        sample(
            "Attraction-0",
            "Show me the details of the attraction with slug "
            "'prbyhlxcgfqn-tickets-to-the-eiffel-tower-summit' in EUR.",
            ["Get_Attraction_Details", "Get_Availability", "Search_Attraction_Location"],
            [
                [
                    (
                        c(
                            "Get_Attraction_Details",
                            slug="prbyhlxcgfqn-tickets-to-the-eiffel-tower-summit",
                            currency_code="EUR",
                        ),
                        ok({"name": "Eiffel Tower summit", "price": 42.5}),
                    )
                ]
            ],
            "The Eiffel Tower summit ticket costs 42.50 EUR.",
        ),
        hotel_reviews("Hotels-0", "Paris", "-1456928", 191605, "Hotel Lumiere", ("2024-11-12", "2024-11-15")),
        hotel_reviews("Hotels-1", "Rome", "-126693", 88412, "Albergo Sole", ("2024-12-01", "2024-12-04")),
        sample(
            "Hotels-10",
            "Find 4 or 5 star hotels in Amsterdam from 2024-11-20 to 2024-11-22 with free "
            "cancellation, a review score of 8+, within 3 km of the centre and a fitness centre, sorted by "
            "price; which hotel comes first?",
            ["Search_Hotel_Destination", "Get_Filter", "Search_Hotels", "Get_Hotel_Policies"],
            [
                [
                    (
                        c("Search_Hotel_Destination", query="Amsterdam"),
                        ok([{"dest_id": "-2140479", "search_type": "CITY"}]),
                    )
                ],
                [
                    (
                        c(
                            "Get_Filter",
                            dest_id="-2140479",
                            search_type="CITY",
                            arrival_date="2024-11-20",
                            departure_date="2024-11-22",
                        ),
                        ok({"filters": [{"id": "class::4"}, {"id": "facility::107"}]}),
                    )
                ],
                [
                    (
                        c(
                            "Search_Hotels",
                            dest_id="-2140479",
                            search_type="CITY",
                            arrival_date="2024-11-20",
                            departure_date="2024-11-22",
                            categories_filter=filters,
                            sort_by="price",
                        ),
                        ok({"hotels": [{"hotel_id": 5512, "name": "Canal House"}]}),
                    )
                ],
            ],
            "Canal House is the cheapest match.",
        ),
        flights_legs("Flights-0"),
        car_rental("Car-Rental-0"),
        sample(
            "Car-Rental-10",
            "Which cars can I rent at Lyon Part-Dieu station from 2024-11-08 09:30 to "
            "2024-11-10 09:30 (same place)?",
            ["Location_to_Lat_Long", "Search_Car_Rentals", "Vehicle_Details"],
            [
                [
                    (
                        c("Location_to_Lat_Long", query="Lyon Part-Dieu station"),
                        ok([{"geometry": {"location": {"lat": 45.7606, "lng": 4.8594}}}]),
                    )
                ],
                [
                    (
                        c(
                            "Search_Car_Rentals",
                            pick_up_latitude=45.7606,
                            pick_up_longitude=4.8594,
                            drop_off_latitude=45.7606,
                            drop_off_longitude=4.8594,
                            pick_up_date="2024-11-08",
                            drop_off_date="2024-11-10",
                            pick_up_time="09:30",
                            drop_off_time="09:30",
                        ),
                        ok(
                            {
                                "search_key": "eyJseW9uIjoxfQ",
                                "vehicles": [{"vehicle_id": "5501"}, {"vehicle_id": "5502"}],
                            }
                        ),
                    )
                ],
            ],
            "Two cars are available: vehicles 5501 and 5502.",
        ),
        sample(
            "Attraction-10",
            "For the Louvre museum entry ticket, give me its details and the available time "
            "slots on 2024-12-14.",
            ["Search_Attraction_Location", "Get_Attraction_Details", "Get_Availability"],
            [
                [
                    (
                        c("Search_Attraction_Location", query="Louvre museum entry ticket"),
                        ok({"products": [{"productSlug": "prwxuqjy3x9b-louvre-museum-entry"}]}),
                    )
                ],
                [
                    (
                        c("Get_Attraction_Details", slug="prwxuqjy3x9b-louvre-museum-entry"),
                        ok({"price": 22.0}),
                    ),
                    (
                        c("Get_Availability", slug="prwxuqjy3x9b-louvre-museum-entry", date="2024-12-14"),
                        ok([{"start": "09:00"}, {"start": "11:30"}]),
                    ),
                ],
            ],
            "The ticket costs 22 USD; slots on 2024-12-14 start at 09:00 and 11:30.",
        ),
        cross("Cross-0", "Park Hyatt Tokyo", "2024-11-18"),
        cross("Cross-1", "Tokyo Station", "2024-12-09"),
    ]


if __name__ == "__main__":
    OUT.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in build()), encoding="utf-8")
    print(f"wrote {OUT}")
