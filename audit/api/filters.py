import django_filters

from ..models import Event


class EventFilter(django_filters.FilterSet):
    object_type = django_filters.CharFilter(field_name="object_type")
    object_id = django_filters.CharFilter(field_name="object_id")
    verb = django_filters.CharFilter(field_name="verb")

    class Meta:
        model = Event
        fields = ["object_type", "object_id", "verb"]
