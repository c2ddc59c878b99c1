"""Input and hot output serializers copy their leaf fields shallowly (delivery/serializers.py):
each instance still has fields of its own, bound to it, and the declared fields stay unbound."""

from integrations.partner.serializers import PartnerOrderInput, PartnerOrderOutput
from tests import builders


def test_each_instance_binds_fields_of_its_own_and_leaves_the_declared_ones_alone():
    first, second = PartnerOrderInput(data={}), PartnerOrderInput(data={})

    for name, field in first.fields.items():
        assert field is not second.fields[name]
        assert field.parent is first and second.fields[name].parent is second
        assert PartnerOrderInput._declared_fields[name].parent is None


def test_an_invalid_body_does_not_leak_into_the_next_instance():
    bad = PartnerOrderInput(data={**builders.partner_order(), "recipientPhone": "x"})
    good = PartnerOrderInput(data=builders.partner_order())

    assert not bad.is_valid()
    assert good.is_valid(), good.errors
    assert "recipientPhone" in bad.errors and good.errors == {}


def test_nested_fields_are_still_deep_copied():
    first, second = PartnerOrderOutput(), PartnerOrderOutput()

    assert first.fields["driver"] is not second.fields["driver"]
    assert first.fields["driver"].parent is first
    for name in first.fields["driver"].fields:
        assert first.fields["driver"].fields[name] is not second.fields["driver"].fields[name]
